"""egs/synthetic/batch_share.py: where a corpus's short utterances land in the sampler's batches."""

import json

from conftest import repo_script, tiny_config_dict

from tts.config import config_from_dict, save_config
from tts.data import read_split


def test_share_of_batches_holding_the_marked_utterances(tiny_corpus, tmp_path, capsys):
    config = tmp_path / "config.yaml"
    save_config(config_from_dict(tiny_config_dict()), config)
    train = read_split(tiny_corpus, "train")
    batch_share = repo_script("egs/synthetic/batch_share.py")
    args = ["--data", str(tiny_corpus), "--config", str(config), "--prefix", train[0], "--epochs", "3"]
    assert batch_share.main(args + ["--batches", "100000:1", "100000:1000", "--out", str(tmp_path / "s.json")]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result == json.loads((tmp_path / "s.json").read_text())
    assert result["utterances"] == len(train) and result["marked"] == 1
    one_each, all_in_one = result["batches"]["100000:1"], result["batches"]["100000:1000"]
    assert one_each == {"per_epoch": len(train), "share_holding": round(1 / len(train), 4)}
    assert all_in_one == {"per_epoch": 1, "share_holding": 1.0}
    marked = result["frames_marked"]  # one utterance: every percentile is its length
    assert marked["p5"] == marked["p50"] == marked["max"] > 0
    assert result["frames_rest"]["p5"] <= result["frames_rest"]["p50"] <= result["frames_rest"]["max"]


def test_a_prefix_no_utterance_has_is_one_error_line(tiny_corpus, tmp_path, capsys):
    config = tmp_path / "config.yaml"
    save_config(config_from_dict(tiny_config_dict()), config)
    batch_share = repo_script("egs/synthetic/batch_share.py")
    assert batch_share.main(["--data", str(tiny_corpus), "--config", str(config), "--prefix", "NOPE",
                             "--batches", "3200:32"]) == 2
    assert capsys.readouterr().err.strip() == "error: no training utterance id starts with 'NOPE': check --prefix"
