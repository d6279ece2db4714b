"""How every ``transfers`` command fails: one line on stderr, never a traceback unless asked.

* A domain error (``transfers.errors``), mapped once here (``exit_code_for``): its message as one
  line, exit 1 (not found, refused, conflict, invalid), 69 when ``Unavailable``; an
  ``ops.errors.OperatorError`` brings its own lines and exit code:
* bad settings: every problem, one line each, exit 2, before the command starts;
* A ``TRANSFERS_*`` variable no setting reads: ``warning: ...`` naming the closest known one; the
  command runs on.
* PostgreSQL or Redis unusable: one line naming it (password masked) and why, exit 69.
* Anything else: one line with an error id; the traceback goes to the log under that id.
* ``--debug`` (before or after the sub-command's name) or ``TRANSFERS_LOG_LEVEL=DEBUG``: the traceback
  is printed as well.
"""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from transfers.errors import DomainError, Unavailable
from transfers.ops.errors import EX_FAILURE, EX_UNAVAILABLE, OperatorError, SettingsInvalid

if TYPE_CHECKING:
    from transfers.config import Settings

# The settings (pydantic), the database probes (SQLAlchemy, Alembic) and the crash log (structlog)
# are imported where they are used, not here: `transfers --help` and `transfers X --help` import this
# module and should answer at once (tests/unit/test_cli_lazy.py).

DEBUG_KEY = "transfers.debug"
# Commands that check the settings themselves and report them among other results.
SELF_CHECKING = frozenset({"doctor"})


def exit_code_for(exc: DomainError) -> int:
    """The exit code of a command that ended with ``exc`` (the table in docs/operations/cli.md)."""
    if isinstance(exc, OperatorError):
        return exc.exit_code
    if isinstance(exc, Unavailable):
        return EX_UNAVAILABLE
    return EX_FAILURE


def lines_of(exc: DomainError) -> list[str]:
    return exc.lines if isinstance(exc, OperatorError) else [exc.message]


def _set_debug(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[DEBUG_KEY] = True


def debug_option() -> click.Option:
    return click.Option(
        ["--debug"],
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_set_debug,
        help="print tracebacks of errors (also: TRANSFERS_LOG_LEVEL=DEBUG)",
    )


def prepare_commands(command: click.Command) -> None:
    """On ``command`` and every sub-command below it: ``--debug`` (so ``transfers serve --debug`` works
    too), and the settings checked before the command's own code runs (after its arguments are
    parsed, so ``--help`` and usage errors come first)."""
    if not any(p.name == "debug" for p in command.params):
        command.params.append(debug_option())
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            prepare_commands(sub)
    elif command.callback is not None and command.name not in SELF_CHECKING:
        command.callback = _settings_checked(command.callback)


def _settings_checked(callback: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def checked(*args: Any, **kwargs: Any) -> Any:
        from transfers.config import unknown_variables
        from transfers.ops.settings_errors import load_settings

        load_settings()
        for line in unknown_variables():  # a misspelled setting would otherwise be silently ignored
            click.echo(f"warning: {line}", err=True)
        return callback(*args, **kwargs)

    return checked


def _loaded_settings() -> Settings | None:
    from transfers.config import get_settings

    try:
        return get_settings()
    except Exception:
        return None


def _debugging(ctx: click.Context) -> bool:
    if ctx.meta.get(DEBUG_KEY):
        return True
    cfg = _loaded_settings()
    return cfg is not None and cfg.log_level == "DEBUG"


class OperatorGroup(click.Group):
    """The root group: every failure of any sub-command rendered as above (``prepare_commands`` adds
    ``--debug`` and the settings check to each of them)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except DomainError as exc:
            self._fail(ctx, exc, lines_of(exc), exit_code_for(exc))
        except Exception as exc:
            from transfers.ops.crash import log_unexpected, one_line
            from transfers.ops.database import describe_database_error

            cfg = _loaded_settings()
            problem = describe_database_error(exc, cfg.resolved_database_url, anywhere=True) if cfg else None
            if problem is not None:
                self._fail(ctx, exc, problem.lines, problem.exit_code)
            if _debugging(ctx):
                raise
            command = " ".join(["transfers", ctx.invoked_subcommand or ""]).strip()
            error_id = log_unexpected(exc, command=command, log_format=cfg.log_format if cfg else "json")
            self._fail(ctx, exc, [one_line(exc, error_id)], 1)
        return None

    @staticmethod
    def _fail(ctx: click.Context, exc: BaseException, lines: list[str], code: int) -> None:
        if _debugging(ctx) and not isinstance(exc, SettingsInvalid):
            traceback.print_exception(exc, file=sys.stderr)
        for line in lines:
            click.echo(f"error: {line}", err=True)
        ctx.exit(code)
