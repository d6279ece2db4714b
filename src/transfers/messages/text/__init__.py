"""The words of the messages to travellers (docs/rules/messages.md#templates): ``render(template,
channel, language, ctx) -> Rendered(subject, body)`` for each template on its channels, in the seven
languages of ``transfers/i18n``, and ``segments.py``, which counts what an SMS costs.

* ``context.py``: ``MessageContext`` (what a message may say), ``Rendered``, the longest values sized for.
* ``wording.py``: the English words, gettext message ids.
* ``rendering.py``: ``render`` and the channels each template goes on (``CHANNELS``).
* ``segments.py``: GSM-7 / UCS-2 segment counting, ``to_gsm7``.
"""

from transfers.messages.text.context import MessageContext, Rendered
from transfers.messages.text.rendering import CHANNELS, render

__all__ = ["CHANNELS", "MessageContext", "Rendered", "render"]
