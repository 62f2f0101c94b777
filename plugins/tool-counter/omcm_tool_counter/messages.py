"""What the plugin says, in Korean (the seed's own sentences) and English."""

MESSAGES = {
    "ko": {
        "Read": "연속 Read 호출이 {n}회 감지되었습니다. Glob이나 Grep 도구를 사용하면 더 효율적으로 파일을 탐색할 수 있습니다.",
        "Bash": "연속 Bash 호출이 {n}회 감지되었습니다. 여러 명령어를 하나의 Bash 호출로 결합하거나 스크립트 파일 실행을 고려해보세요.",
    },
    "en": {
        "Read": "{n} consecutive Read calls detected. The Glob or Grep tools can explore files more efficiently.",
        "Bash": "{n} consecutive Bash calls detected. Consider combining several commands into one Bash call or running a script file.",
    },
}


def suggestion(tool: str, count: int, language: str) -> str:
    return MESSAGES.get(language, MESSAGES["en"])[tool].format(n=count)
