from click.testing import CliRunner

from propeval.cli import cli


def test_help_lists_commands() -> None:
    result = CliRunner().invoke(cli, ["--help"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "check" in result.output
