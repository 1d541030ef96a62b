"""Worker children and web processes freeze their start-up heap (perfplatform.heap says why)."""

from __future__ import annotations

import gc
import weakref


class _Node:
    pass


def test_it_freezes_the_heap_in_each_worker_child_and_still_collects_later_garbage():
    from celery.signals import worker_process_init

    import perfplatform.celery  # noqa: F401  (connects the handler)

    gc.unfreeze()
    try:
        worker_process_init.send(sender=None)
        assert gc.get_freeze_count() > 1000  # Django, the models and the tasks are in the permanent generation
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # a cycle made after the freeze
        gone = weakref.ref(a)
        del a, b
        gc.collect()
        assert gone() is None
    finally:
        gc.unfreeze()
