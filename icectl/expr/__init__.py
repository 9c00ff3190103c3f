"""The small languages a user types, one grammar each, and their printers where a plan shows them:

- :mod:`~icectl.expr.schema`: the compact schema ``id:long!, name:string, tags:list<string>``;
- :mod:`~icectl.expr.term`: a transform term ``day(ts)``, ``bucket(16, id)``, and its binding to a schema;
- :mod:`~icectl.expr.partition`: a partition spec, terms with an optional ``AS name``;
- :mod:`~icectl.expr.sort`: a sort order ``id desc nulls last, day(ts)``;
- :mod:`~icectl.expr.column`: a new column and a column move (``alter``);
- :mod:`~icectl.expr.pairs`: ``KEY=VALUE`` and the other ``LEFT=RIGHT`` pairs;
- :mod:`~icectl.expr.duration`: ``7d``, ``36h``, ``500ms`` (a unit is required);
- :mod:`~icectl.expr.timestamp`: ISO 8601, epoch milliseconds, or an age (``60h`` ago);
- :mod:`~icectl.expr.size`: ``256MB``, ``1GiB`` (binary multiples, a unit is required).

Each parser is one function that raises :class:`icectl.errors.UsageError` (exit 2) with a one-line
message naming what it accepts. This package imports only :mod:`icectl.spec` and :mod:`icectl.errors`.
"""
