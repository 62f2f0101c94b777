from omcm_rel_loud import speaker

user_prompt_submit = speaker("loud-c")
session_start = speaker("loud-c")
