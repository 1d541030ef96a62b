import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfplatform.settings")
application = get_wsgi_application()

from perfplatform.heap import freeze_startup_heap  # noqa: E402
from perfplatform.inprocess import start as start_inprocess_sweep  # noqa: E402

freeze_startup_heap()  # perfplatform.heap says why
start_inprocess_sweep()  # tasks in-process (no broker, no beat): the periodic sweep runs here
