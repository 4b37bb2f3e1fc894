"""``pvdkit record`` on a terminal says why nothing moves before a slow first step (a fresh
install compiles simcore's kernels then)."""

from __future__ import annotations

import time

from simcore.cli.record import _NoticeBeforeFirstStep


def test_a_slow_first_step_gets_one_notice_and_a_fast_one_none(capsys):
    seen: list[tuple[int, int]] = []
    slow = _NoticeBeforeFirstStep(lambda d, t: seen.append((d, t)), after=0.05)
    time.sleep(1.0)  # well past the notice's 0.05 s
    slow(1, 10)
    slow(2, 10)
    fast = _NoticeBeforeFirstStep(lambda d, t: seen.append((d, t)), after=5.0)
    fast(1, 10)  # long before its 5 s
    err = capsys.readouterr().err
    assert err.count("compiles simcore's kernels") == 1
    assert seen == [(1, 10), (2, 10), (1, 10)]


def test_an_ended_run_cancels_the_notice(capsys):
    notice = _NoticeBeforeFirstStep(lambda d, t: None, after=0.5)
    notice.cancel()
    time.sleep(1.0)
    assert capsys.readouterr().err == ""
