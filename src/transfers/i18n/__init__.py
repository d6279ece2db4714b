"""The service's languages for what a traveller reads (docs/rules/messages.md#languages): which languages
exist, how a tag, ``?lang=`` or ``Accept-Language`` picks one, the gettext catalogs, and dates and times
written as each language writes them (Babel).

Why a package of its own, in the bottom layer: the messages to travellers (``messages/text``) and the
traveller's page (``tracking/pages.py``) speak the same seven languages from the same catalogs, and the
page sits below the messages package; what both need lives below both.

* ``languages.py``: ``LANGUAGES``, matching a BCP 47 tag by its primary subtag, ``Accept-Language``.
* ``catalogs.py``: ``translations(language)``, compiled from ``locale/<lang>/LC_MESSAGES/messages.po``.
* ``dates.py``: the 24-hour time and the local date, in a language's locale.
"""
