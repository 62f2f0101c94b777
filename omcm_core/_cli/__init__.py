"""The operator commands behind `omcm`. Private: plugins add commands through the `commands` hook."""
