import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfplatform.settings")
application = get_wsgi_application()

from perfplatform.heap import freeze_startup_heap  # noqa: E402

freeze_startup_heap()  # perfplatform.heap says why
