"""Exchange rates (docs/rules/fx.md): the rates in use, ECB files, manual rates and conversion."""
