"""The reference sandbox partner (docs/rules/sandbox.md): a real transport company's side of the contract."""

from transfers.sandbox_partner.app import create_sandbox_partner_app
from transfers.sandbox_partner.config import SandboxPartnerConfig
from transfers.sandbox_partner.partner import SandboxPartner
from transfers.sandbox_partner.scenarios import SCENARIOS, Scenario

__all__ = ["SCENARIOS", "SandboxPartner", "SandboxPartnerConfig", "Scenario", "create_sandbox_partner_app"]
