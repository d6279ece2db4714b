"""GET /api/v1/booking-api/wallet, /wallets and /wallet/entries (docs/rules/wallet.md)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from transfers import paging
from transfers.api import client_schemas as cs
from transfers.api import schemas
from transfers.api.deps import current_client, services
from transfers.api.openapi import register_query_types
from transfers.api.responses import JSONBody
from transfers.clients.models import ClientPrincipal
from transfers.wallet import statement

router = APIRouter(prefix="/api/v1/booking-api", tags=["Wallet"])

_DATE_TIME = {"type": "string", "format": "date-time"}
_CURRENCY = {"type": "string", "minLength": 3, "maxLength": 3, "examples": ["GBP"]}
register_query_types("get_wallet", {"currency": _CURRENCY})
register_query_types(
    "list_wallet_entries",
    {
        "currency": _CURRENCY,
        "created_from": _DATE_TIME,
        "created_to": _DATE_TIME,
        "limit": {"type": "integer", "minimum": 1, "maximum": paging.MAX_LIMIT, "default": paging.DEFAULT_LIMIT},
        "cursor": {"type": "string", "maxLength": paging.MAX_CURSOR_CHARS},
    },
)


@router.get(
    "/wallet",
    summary="Your wallet's balance",
    description="Your default wallet, or with `currency` your wallet in that currency; 404 `WALLET_NOT_FOUND` "
    "for a currency you hold no wallet in.",
    response_model=cs.Wallet,
    responses=cs.ONE_WALLET_ERRORS,
    operation_id="get_wallet",
)
async def get_wallet(
    request: Request,
    currency: str | None = Query(
        default=None, description="ISO 4217 code of one of your wallets (default: the default)"
    ),
    client: ClientPrincipal = Depends(current_client),
) -> Response:
    return JSONBody(await statement.summary(services(request), client, currency))


@router.get(
    "/wallets",
    summary="Every wallet you hold, one per currency",
    description="`default` marks the wallet used when a request names no currency.",
    response_model=cs.WalletList,
    responses=schemas.AUTH_ERRORS,
    operation_id="list_wallets",
)
async def list_wallets(request: Request, client: ClientPrincipal = Depends(current_client)) -> Response:
    return JSONBody(await statement.every_wallet(services(request), client))


@router.get(
    "/wallet/entries",
    summary="Your wallet's statement, newest first",
    description="Every movement of the balance in the order it happened, newest first, each with the "
    "balance right after it. Paged like the booking list: pass `next_cursor` back as "
    "`cursor`; `created_from` inclusive, `created_to` exclusive (ISO 8601 with offset). "
    "The default wallet's, or with `currency` that wallet's (404 `WALLET_NOT_FOUND` when you hold none). "
    "422 `INVALID_FILTER` / `INVALID_CURSOR` in the string-code shape.",
    response_model=cs.WalletEntryPage,
    responses=cs.WALLET_ERRORS,
    operation_id="list_wallet_entries",
)
async def list_wallet_entries(
    request: Request,
    limit: str | None = Query(default=None, description="page size, 1 to 100 (default 20)"),
    cursor: str | None = Query(default=None, description="`next_cursor` of the previous page"),
    created_from: str | None = Query(default=None, description="at or after (ISO 8601 with offset)"),
    created_to: str | None = Query(default=None, description="before (ISO 8601 with offset)"),
    currency: str | None = Query(
        default=None, description="ISO 4217 code of one of your wallets (default: the default)"
    ),
    client: ClientPrincipal = Depends(current_client),
) -> Response:
    return JSONBody(
        await statement.entries(
            services(request),
            client,
            limit=limit,
            cursor=cursor,
            created_from=created_from,
            created_to=created_to,
            currency=currency,
        )
    )
