from transfers.config import Settings


def test_sandbox_partner_exists_only_in_sandbox() -> None:
    assert Settings(environment="sandbox").sandbox_partner_enabled is True
    assert Settings(environment="sandbox", sandbox_partner=False).sandbox_partner_enabled is False
    assert Settings(environment="live").sandbox_partner_enabled is False
    assert Settings(environment="live", sandbox_partner=True).sandbox_partner_enabled is False


def test_ssrf_guards_are_on_in_every_environment_until_lifted() -> None:
    for environment in ("sandbox", "live"):
        settings = Settings(environment=environment)  # type: ignore[arg-type]
        assert settings.private_partner_urls_allowed is False and settings.private_webhook_urls_allowed is False
    lifted = Settings(environment="sandbox", allow_private_partner_urls=True)
    assert lifted.private_partner_urls_allowed is True and lifted.private_webhook_urls_allowed is False
    lifted = Settings(environment="sandbox", allow_private_webhook_urls=True)
    assert lifted.private_webhook_urls_allowed is True and lifted.private_partner_urls_allowed is False


def test_the_built_in_partner_is_trusted_at_the_url_the_service_mounts_it() -> None:
    assert Settings(environment="sandbox").sandbox_partner_url == "http://127.0.0.1:8000/sandbox-partner"
    public = Settings(environment="sandbox", public_base_url="https://sandbox.example.com/")
    assert public.sandbox_partner_url == "https://sandbox.example.com/sandbox-partner"
    assert Settings(environment="sandbox", sandbox_partner=False).sandbox_partner_url is None
    assert Settings(environment="live").sandbox_partner_url is None


def test_database_urls_get_async_drivers() -> None:
    assert Settings(database_url="postgresql://u@h/db").resolved_database_url == "postgresql+asyncpg://u@h/db"
    assert Settings(database_url="").resolved_database_url.startswith("sqlite+aiosqlite:///")
