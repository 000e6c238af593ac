"""The agent CLIs' protocols, one folder each, and the registry that says which runs a runner (internal).

Where it sits: under the drivers (``agents/drivers``), above the events and the settings. Every protocol
speaks one vocabulary: a pure **codec** (stdout lines -> events; our messages -> bytes), a pure
**launch** builder (the command line, the files), a **launcher** (the I/O before the CLI runs: locate
it, write its files; ``launcher.py``), and either a **wire** (a persistent process: the protocol as an
object, ``wire.py``) or an **adapter** (a process per turn: the CLI's home, each turn's command and
decoder, ``per_turn.py``). Shared pieces: ``codec.py`` (JSON lines), ``launch.py`` (turn commands, MCP
servers, the kernel tool server's address), ``command.py`` (how a CLI is found), ``child_environment.py`` (the environment a CLI starts with),
``adapter_settings.py``. No protocol's folder imports another's: what two share lives here.

The registry (``registry.py``), one entry per (CLI, mode)::

    cli     mode         driver      hooks    kernel tools  accepts                       launcher
    claude  stream-json  persistent  control  pipe          no cli_config; session_id    ClaudeLauncher
    codex   app-server   persistent  kernel   loopback      cli_config; names its thread  CodexAppServerLauncher
    codex   exec         per-turn    command  loopback      cli_config; names its thread  CodexExecLauncher
    gemini  print        per-turn    command  loopback      cli_config; session_id        GeminiLauncher
    acp     stdio        persistent  kernel   loopback      names its session             AcpLauncher

A new protocol is one folder here (or anywhere: the tests define one) and one ``register_protocol``.
"""
