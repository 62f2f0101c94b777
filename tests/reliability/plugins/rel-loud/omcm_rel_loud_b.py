from omcm_rel_loud import speaker

user_prompt_submit = speaker("loud-b")
session_start = speaker("loud-b")
