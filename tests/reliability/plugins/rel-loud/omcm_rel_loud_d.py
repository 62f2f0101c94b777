from omcm_rel_loud import speaker

user_prompt_submit = speaker("loud-d")
session_start = speaker("loud-d")
