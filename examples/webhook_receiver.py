"""A minimal receiver of the service's webhooks: verify, dedupe by event id, apply by sequence.

Run: WEBHOOK_SECRETS=whsec_... PORT=9000 python examples/webhook_receiver.py
(``pip install ./sdk`` first; during the 24 h after a rotation pass both secrets, space separated.)
"""

import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from transfers_sdk import BookingEvent, WebhookVerificationError, verify_webhook

SECRETS = os.environ["WEBHOOK_SECRETS"].split()
seen: set[str] = set()  # event ids already handled (production: a table with a unique key)
latest: dict[str, int] = {}  # reservation_no -> the highest sequence applied


class Hook(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            event = verify_webhook(body, dict(self.headers), SECRETS)
        except WebhookVerificationError:
            self.send_response(400)  # not from the service (or replayed too late): ignore it
            self.end_headers()
            return
        if event.id not in seen:  # delivered at least once: the same id may come again
            seen.add(event.id)
            if isinstance(event, BookingEvent):
                number = event.booking.reservation_no
                if event.sequence > latest.get(number, 0):  # an older event after a newer one: drop it
                    latest[number] = event.sequence
                    print(json.dumps({"type": event.type, "reservation_no": number, "sequence": event.sequence,
                                      "status": event.booking.status.value}), flush=True)
        self.send_response(204)  # any 2xx within 5 s means delivered: answer first, work later
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep stdout for the events


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "9000"))), Hook).serve_forever()
