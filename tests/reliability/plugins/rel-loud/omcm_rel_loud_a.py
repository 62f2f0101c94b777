from omcm_rel_loud import speaker

user_prompt_submit = speaker("loud-a")
session_start = speaker("loud-a")
