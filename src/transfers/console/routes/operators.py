"""``/console/operators``: who can sign in to the console. Everyone reads the list; an admin
(``MANAGE_OPERATORS``) adds an operator (the generated password shown once, as
``transfers operators create`` prints it) and disables one (its sessions end everywhere at once).
Both through ``operators.service``, the CLI's own use cases, audited with the operator."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.console.auth import PREFIX, PageNotFound, Signed, services
from transfers.console.forms import positive_id, text
from transfers.console.render import page
from transfers.operators import service as operators
from transfers.operators.models import Capability, OperatorProblem, Role

router = APIRouter()
ROLES = [r.value for r in Role]


async def _list_page(
    request: Request,
    viewer: Signed,
    *,
    errors: dict[str, str] | None = None,
    typed: dict[str, str] | None = None,
    notice: str = "",
    status_code: int = 200,
) -> Response:
    rows = await operators.list_operators(services(request).db)
    return page(
        request,
        "operators.html",
        {
            "rows": rows,
            "roles": ROLES,
            "errors": errors or {},
            "typed": typed or {"role": Role.SUPPORT.value},
            "notice": notice,
            "created": None,
        },
        viewer=viewer,
        title="Operators",
        status_code=status_code,
    )


@router.get("/operators")
async def operators_page(request: Request, viewer: Signed) -> Response:
    notice = "The operator is disabled; its sessions have ended." if request.query_params.get("done") else ""
    return await _list_page(request, viewer, notice=notice)


@router.post("/operators")
async def operator_create(request: Request, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_OPERATORS)
    form = await viewer.form(request)
    email, email_error = text(form.get("email"), limit=320)
    role = form.get("role")
    typed = {"email": email, "role": role if isinstance(role, str) and role in ROLES else ""}
    errors = {}
    if email_error:
        errors["email"] = email_error
    if role not in ROLES:
        errors["role"] = "Choose admin or support."
    if not errors:
        svc = services(request)
        try:
            created = await operators.create_operator(
                svc.db, svc.clock, email=email, role=Role(str(role)), password=None, actor=viewer.actor
            )
        except OperatorProblem as problem:
            errors["email"] = str(problem)[:1].upper() + str(problem)[1:] + "."
        else:
            rows = await operators.list_operators(svc.db)
            return page(
                request,
                "operators.html",
                {
                    "rows": rows,
                    "roles": ROLES,
                    "errors": {},
                    "typed": {"role": Role.SUPPORT.value},
                    "notice": "",
                    "created": created,
                },
                viewer=viewer,
                title="Operators",
            )
    return await _list_page(request, viewer, errors=errors, typed=typed, status_code=400)


@router.post("/operators/{operator_id}/disable")
async def operator_disable(request: Request, operator_id: str, viewer: Signed) -> Response:
    viewer.require(Capability.MANAGE_OPERATORS)
    await viewer.form(request)
    wanted, problem = positive_id(operator_id)
    if wanted is None or problem:
        raise PageNotFound("There is no such operator.")
    svc = services(request)
    try:
        await operators.disable_operator(svc.db, svc.clock, wanted, actor=viewer.actor)
    except OperatorProblem:
        raise PageNotFound("There is no such operator.") from None
    return RedirectResponse(f"{PREFIX}/operators?done=disabled", status_code=303)
