"""Django settings, read from the environment (see docs/API.md section 1 and README)."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from perfplatform.env import env_bool, env_float, env_int, env_list, env_str, env_url, parse_bool

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("PERF_VAR_DIR", str(BASE_DIR / "var")))
(VAR_DIR / "static").mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    # No key in the repository: a local install generates one under var/ on first start and every
    # process sharing that directory (gunicorn workers, Celery) reads the same file.
    _key_file = VAR_DIR / "secret_key"
    if not _key_file.exists():
        import secrets as _secrets

        _tmp = _key_file.with_suffix(f".{os.getpid()}")
        _tmp.write_text(_secrets.token_urlsafe(50))
        _tmp.chmod(0o600)
        os.replace(_tmp, _key_file) if not _key_file.exists() else _tmp.unlink()
    SECRET_KEY = _key_file.read_text().strip()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
PERF_BASE_URL = env_url("PERF_BASE_URL", "http://127.0.0.1:8000", schemes=("http", "https")).rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "perfplatform.apps.PerfplatformConfig",
    "metrics.apps.MetricsConfig",
    "alerts.apps.AlertsConfig",
]

MIDDLEWARE = [
    "perfplatform.health.HealthzMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "perfplatform.middleware.RejectNulMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "perfplatform.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "perfplatform.urls"
WSGI_APPLICATION = "perfplatform.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

# --- Database -------------------------------------------------------------------------------------
_DEFAULT_SQLITE = VAR_DIR / "perfplatform.sqlite3"
DATABASE_URL = env_str("DATABASE_URL", "")
if DATABASE_URL:
    try:
        DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {exc}") from None
    if DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3" and not DATABASES["default"].get("NAME"):
        raise ImproperlyConfigured(f"DATABASE_URL names no database (postgres://USER@HOST:PORT/NAME): {DATABASE_URL!r}")
else:
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(_DEFAULT_SQLITE)}}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers (dashboards) run while an upload writes; IMMEDIATE avoids upgrade deadlocks.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis, cache, Celery -------------------------------------------------------------------------
# Celery's broker and Django's cache both read it: kombu's Redis transport knows redis:// and rediss:// only.
REDIS_URL = env_url("REDIS_URL", "", schemes=("redis", "rediss"))
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # Short timeouts: a Redis outage must not stall uploads (the cache is an optimisation).
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Every queue the platform uses is named here and only here; `celery -A perfplatform worker` without
# -Q consumes all of them because CELERY_TASK_QUEUES is derived from this table.
CELERY_TASK_ROUTES = {
    "alerts.tasks.analyse_build": {"queue": "analysis"},
    "alerts.tasks.sweep_pending_analysis": {"queue": "maintenance"},
    "alerts.tasks.deliver_notification": {"queue": "notifications"},
    "alerts.tasks.compute_check": {"queue": "checks"},
    "alerts.tasks.post_check": {"queue": "notifications"},
    "alerts.tasks.send_run_request": {"queue": "notifications"},
    "alerts.tasks.apply_requested_build": {"queue": "analysis"},
}
CELERY_TASK_DEFAULT_QUEUE = "maintenance"
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL  # no broker: run tasks in-process (make demo)
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_TIME_LIMIT = env_int("PERF_TASK_TIME_LIMIT", 300, minimum=1)
CELERY_TASK_SOFT_TIME_LIMIT = max(1, CELERY_TASK_TIME_LIMIT - 30)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Fail fast when publishing while Redis is down: the outbox sweep re-queues the work later.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("PERF_VISIBILITY_TIMEOUT", 900, minimum=10),
    "socket_connect_timeout": 2,
    "socket_timeout": 5,
    "max_retries": 1,
}
CELERY_TASK_PUBLISH_RETRY = False
PERF_SWEEP_INTERVAL_SECONDS = env_int("PERF_SWEEP_INTERVAL_SECONDS", 60, minimum=1)
PERF_SWEEP_MIN_AGE_SECONDS = env_int("PERF_SWEEP_MIN_AGE_SECONDS", 30, minimum=0)
CELERY_BEAT_SCHEDULE = {
    "sweep-pending-analysis": {
        "task": "alerts.tasks.sweep_pending_analysis",
        "schedule": float(PERF_SWEEP_INTERVAL_SECONDS),
    }
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# --- Uploads and detection ------------------------------------------------------------------------
PERF_MAX_UPLOAD_BYTES = env_int("PERF_MAX_UPLOAD_BYTES", 10 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = PERF_MAX_UPLOAD_BYTES
PERF_HISTORY_WINDOW = env_int("PERF_HISTORY_WINDOW", 200, minimum=20)
# Expected false alarms per 1000 builds of one series; the detector calibrates its thresholds to it.
PERF_TARGET_FALSE_ALARMS_PER_1000_BUILDS = env_float("PERF_TARGET_FALSE_ALARMS_PER_1000_BUILDS", 0.1, minimum=0.0)
# Pre-merge checks: family-wise false-failure rate per check; how long a check waits for its base build.
PERF_CHECK_FALSE_FAIL_RATE = env_float("PERF_CHECK_FALSE_FAIL_RATE", 0.05, minimum=0.0001)
PERF_CHECK_BASE_WAIT_SECONDS = env_int("PERF_CHECK_BASE_WAIT_SECONDS", 1800, minimum=0)
PERF_DEFAULT_TEAM = env_str("PERF_DEFAULT_TEAM", "central-perf")
# A new alert group is notified once this many later builds were analysed (so alerts that need
# confirmation join it first) and one after the build that raised its newest alert (alerts.notifications),
# or after PERF_NOTIFY_MAX_DELAY_SECONDS, whichever comes first.
PERF_NOTIFY_SETTLE_BUILDS = env_int("PERF_NOTIFY_SETTLE_BUILDS", 4, minimum=0)
PERF_NOTIFY_MAX_DELAY_SECONDS = env_int("PERF_NOTIFY_MAX_DELAY_SECONDS", 1800, minimum=0)
PERF_NOTIFY_TIMEOUT_SECONDS = env_float("PERF_NOTIFY_TIMEOUT_SECONDS", 10.0, minimum=0.1)
# A drift's later extent (the metric kept creeping) is sent again only once its total change reached this
# multiple of the largest change the team was already sent for it.
PERF_NOTIFY_DRIFT_GROWTH = env_float("PERF_NOTIFY_DRIFT_GROWTH", 1.5, minimum=1.0)
# Bisection and confirmation requests to an app's CI (docs/API.md section 7, docs/BISECTION.md): a request
# CI never answers expires after PERF_REQUEST_TIMEOUT_SECONDS; a group waits for its alerts' bisection at
# most PERF_NOTIFY_BISECT_WAIT_SECONDS; one requested build asks for at most PERF_BISECT_MAX_RUNS runs.
PERF_REQUEST_TIMEOUT_SECONDS = env_int("PERF_REQUEST_TIMEOUT_SECONDS", 21600, minimum=1)
PERF_NOTIFY_BISECT_WAIT_SECONDS = env_int("PERF_NOTIFY_BISECT_WAIT_SECONDS", 7200, minimum=0)
PERF_BISECT_MAX_RUNS = env_int("PERF_BISECT_MAX_RUNS", 20, minimum=1)
# Webhook/Slack URLs resolving to loopback or private addresses are refused unless allowed here.
PERF_WEBHOOK_ALLOW_PRIVATE = env_bool("PERF_WEBHOOK_ALLOW_PRIVATE", False)
PERF_WEBHOOK_ALLOWED_HOSTS = env_list("PERF_WEBHOOK_ALLOWED_HOSTS", [])
# Uploads per token per minute (429 with Retry-After beyond it); 0 turns the limit off.
PERF_UPLOAD_RATE_PER_MINUTE = env_int("PERF_UPLOAD_RATE_PER_MINUTE", 600, minimum=0)
# Fault injection for the worker-kill test: seconds to sleep inside an analysis. Never set in production.
PERF_FAULT_ANALYSIS_SLEEP_SECONDS = env_float("PERF_FAULT_ANALYSIS_SLEEP_SECONDS", 0.0, minimum=0.0)

# --- Email ------------------------------------------------------------------------------------------
_EMAIL_URL = env_str("EMAIL_URL", "")
if _EMAIL_URL:
    _u = urlparse(_EMAIL_URL)
    _q = parse_qs(_u.query)
    if _u.scheme in ("smtp", "smtps", "submission"):
        env_url("EMAIL_URL", "", schemes=("smtp", "smtps", "submission"), hostless=("smtp", "smtps", "submission"))
        EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        EMAIL_HOST = _u.hostname or "localhost"
        EMAIL_PORT = _u.port or {"smtp": 25, "smtps": 465, "submission": 587}[_u.scheme]
        EMAIL_HOST_USER = unquote(_u.username or "")
        EMAIL_HOST_PASSWORD = unquote(_u.password or "")
        EMAIL_USE_SSL = _u.scheme == "smtps"
        EMAIL_USE_TLS = _u.scheme == "submission" or parse_bool("EMAIL_URL's tls", _q.get("tls", ["0"])[0])
    elif _u.scheme == "console":
        EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
    else:
        raise ImproperlyConfigured(f"EMAIL_URL scheme must be smtp, smtps, submission or console: {_EMAIL_URL!r}")
else:
    EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
    EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
    EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
    EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
    EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "perfplatform@localhost")
EMAIL_TIMEOUT = 10

# --- Static files, i18n, auth -----------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
# Behind TLS (docs/API.md section 1): HSTS, redirect plain HTTP, cookies only over HTTPS. A TLS-terminating
# proxy must set X-Forwarded-Proto; without PERF_HTTPS that header is not trusted.
PERF_HTTPS = env_bool("PERF_HTTPS", False)
if PERF_HTTPS:
    SECURE_SSL_REDIRECT = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env_int("PERF_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("PERF_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("PERF_HSTS_PRELOAD", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # The health probe is served over plain HTTP inside the cluster.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Sign-in throttling (perfplatform/login_throttle.py): after this many failed sign-ins for one username
# or from one address, further attempts answer 429 until the cool-down has passed.
PERF_LOGIN_MAX_FAILURES = env_int("PERF_LOGIN_MAX_FAILURES", 20, minimum=1)
PERF_LOGIN_COOLDOWN_SECONDS = env_int("PERF_LOGIN_COOLDOWN_SECONDS", 900, minimum=1)

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
