"""The reverse API's request shape and the partner's view of a booking."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from transfers.partners.wire import NoNul, WireDriver


class ReverseUpdate(BaseModel):
    """PUT /api/v1/reverse/booking/update. Unknown fields are ignored, never applied."""

    model_config = ConfigDict(extra="ignore")

    reservation_no: Annotated[str, NoNul, Field(min_length=1, max_length=255)]
    status: Literal["APPROVED", "CANCELLED"]
    driver_info: WireDriver | None = None
    meeting_point: Annotated[str, NoNul, Field(max_length=1000)] | None = None
    cancel_reason: Annotated[str, NoNul, Field(max_length=1000)] | None = None

    @model_validator(mode="after")
    def _driver_for_approval(self) -> ReverseUpdate:
        if self.status == "APPROVED" and self.driver_info is None:
            raise ValueError("APPROVED needs driver_info with name, phone and plate")
        return self


def partner_view(booking: dict[str, Any]) -> dict[str, Any]:
    """What a partner may see of a booking it holds: no client identity, no sell price or markup."""
    driver = None
    if booking["driver_name"]:
        driver = {"name": booking["driver_name"], "phone": booking["driver_phone"], "plate": booking["driver_plate"]}
    return {
        "reservation_no": booking["reservation_no"],
        "status": booking["status"],
        "booking_details": {
            "partner_reference": booking["partner_reference"],
            "vehicle_id": booking["partner_vehicle_id"],
            "vehicle": {"make": booking["vehicle_make"], "model": booking["vehicle_model"],
                        "type": booking["vehicle_type"]},
            "from": booking["pickup_location"],
            "to": booking["dropoff_location"],
            "pickup_datetime": booking["pickup_at"].isoformat(),
            "flight_number": booking["flight_number"],
            "extra_requests": booking["extra_requests"],
            "passengers": {"adult": booking["adult"], "children": booking["children"], "infant": booking["infant"]},
            "suitcase": booking["suitcase"],
            "small_bags": booking["small_bags"],
            "extras": [{"id": e["partner_extra_id"], "name": e["name"], "quantity": e["quantity"]}
                       for e in booking["extras"]],
            "price": {"total": f"{booking['net_total']:.2f}", "currency": booking["currency"]},
            "driver_info": driver,
            "meeting_point": booking["meeting_point"],
        },
        "passenger_info": {
            "name": booking["passenger_name"], "surname": booking["passenger_surname"],
            "email": booking["passenger_email"], "phone": booking["passenger_phone"],
        },
    }
