"""What the plugin says, in Korean and English.

The Read advice names Bash's grep and find first: Claude Code 2.1.330 offers no
Glob or Grep tool (its own system prompt says to search through Bash), older
clients and the SDK do.
"""

MESSAGES = {
    "ko": {
        "Read": "연속 Read 호출이 {n}회 감지되었습니다. 파일을 하나씩 읽기보다 한 번의 Bash 호출에서 grep -rn 이나 find 로 검색하면 더 빠릅니다 (클라이언트에 검색 도구가 있다면 그것도 좋습니다).",
        "Bash": "연속 Bash 호출이 {n}회 감지되었습니다. 여러 명령어를 하나의 Bash 호출로 결합하거나 스크립트 파일 실행을 고려해보세요.",
    },
    "en": {
        "Read": "{n} consecutive Read calls detected. Searching is faster than reading file after file: one grep -rn or find in a single Bash call (or the client's own search tools, where it offers them).",
        "Bash": "{n} consecutive Bash calls detected. Consider combining several commands into one Bash call or running a script file.",
    },
}


def suggestion(tool: str, count: int, language: str) -> str:
    return MESSAGES.get(language, MESSAGES["en"])[tool].format(n=count)
