"""The history audit: recorded broker histories and duplicate-detection streams checked against the spec on Spark.

See ``docs/audit.md``. The pure replays are :mod:`.histories` and
:mod:`.streams`; :mod:`.engine` runs them on Spark as DataFrame steps;
:mod:`.run` is the job; :mod:`.generate` makes synthetic corpora with
planted faults; :mod:`.local` is the single-process replay used as the
baseline.
"""
