"""The inventory's read pool (:func:`icectl.ops.inspect.inventory.ordered_map`): results in the
order of the items, items read only a bounded window ahead of the results handed out (so an
endless stream is mapped in bounded memory), and a consumer that stops early stops the reads."""
from __future__ import annotations

import itertools
import threading
import time

from icectl.errors import InvalidMetadataError
from icectl.ops.inspect.inventory import error_of, ordered_map


def test_results_keep_the_order_of_the_items_whatever_order_they_finish_in():
    def slow_first(i: int) -> int:
        time.sleep(0.02 if i % 3 == 0 else 0)
        return i * i

    assert list(ordered_map(slow_first, range(50), workers=4, window=8)) == [i * i for i in range(50)]


def test_items_are_read_only_a_window_ahead_of_the_results():
    pulled = [0]

    def endless():
        for i in itertools.count():
            pulled[0] += 1
            yield i

    results = ordered_map(lambda i: i, endless(), workers=4, window=16)
    assert next(results) == 0
    assert pulled[0] <= 16
    for _ in range(99):
        next(results)
    assert pulled[0] <= 100 + 16
    results.close()


def test_a_consumer_that_stops_cancels_what_is_queued():
    started = []
    lock = threading.Lock()

    def work(i: int) -> int:
        with lock:
            started.append(i)
        time.sleep(0.01)
        return i

    results = ordered_map(work, range(1000), workers=2, window=32)
    assert next(results) == 0
    results.close()  # as a closed pipe ends the listing
    assert len(started) < 40


def test_an_error_is_one_line_with_its_kind_and_exit_code():
    e = error_of(InvalidMetadataError("m.json: malformed JSON\nat line 2"))
    assert (e.kind, e.type, e.message, e.exit_code) == ("invalid-metadata", "InvalidMetadataError",
                                                        "m.json: malformed JSON", 4)
    bug = error_of(KeyError("x"))
    assert (bug.kind, bug.type, bug.exit_code) == ("internal", "KeyError", 1) and "KeyError" in bug.message
