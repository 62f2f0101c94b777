"""The hook runtime: client, daemon, and one call from payload to reply. Private: plugins use omcm_core."""
