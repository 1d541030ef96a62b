FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PERF_VAR_DIR=/var/lib/perfplatform
WORKDIR /app
COPY pyproject.toml README.md manage.py ./
COPY perfplatform ./perfplatform
COPY metrics ./metrics
COPY alerts ./alerts
RUN pip install --no-cache-dir . && mkdir -p /var/lib/perfplatform && useradd --system perf \
    && chown perf /var/lib/perfplatform
USER perf
EXPOSE 8000
CMD ["gunicorn", "perfplatform.wsgi", "--bind", "0.0.0.0:8000", "--workers", "4"]
