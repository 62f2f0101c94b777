from omcm_rel_loud import speaker

user_prompt_submit = speaker("loud-e")
session_start = speaker("loud-e")
