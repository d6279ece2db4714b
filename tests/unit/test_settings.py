from transfers.config import Settings


def test_sandbox_partner_exists_only_in_sandbox() -> None:
    assert Settings(environment="sandbox").sandbox_partner_enabled is True
    assert Settings(environment="sandbox", sandbox_partner=False).sandbox_partner_enabled is False
    assert Settings(environment="live").sandbox_partner_enabled is False
    assert Settings(environment="live", sandbox_partner=True).sandbox_partner_enabled is False


def test_ssrf_guard_defaults_follow_the_environment() -> None:
    assert Settings(environment="sandbox").private_partner_urls_allowed is True
    assert Settings(environment="live").private_partner_urls_allowed is False
    assert Settings(environment="live", allow_private_partner_urls=True).private_partner_urls_allowed is True


def test_database_urls_get_async_drivers() -> None:
    assert Settings(database_url="postgresql://u@h/db").resolved_database_url == "postgresql+asyncpg://u@h/db"
    assert Settings(database_url="").resolved_database_url.startswith("sqlite+aiosqlite:///")
