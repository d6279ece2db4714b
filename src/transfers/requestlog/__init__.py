"""The request log (docs/rules/agency-portal.md#request-log): what a client's system sent to the API
in the last 7 days, for the agency portal's ``Developers`` page.

Why it is built this way: a GET booking answers in well under a millisecond of CPU, so a database
write per request would cost the API more than the request itself. The outermost middleware
(``api/middleware.py``) only appends a tuple to this process's bounded buffer (``buffer.py``);
a background task (``writer.py``, started by ``runtime.start``) writes the buffer in batches, and
once more when the process stops. The buffer never blocks a request and never grows past its
capacity: when it is full a request is not logged and ``request_log_dropped_total`` counts it.
The scheduled jobs delete rows older than 7 days (``repository.prune_before``).

Layout: ``buffer.py`` (what a request leaves behind), ``writer.py`` (the batches), ``repository.py``
(the rows: insert, the page, the retention).
"""
