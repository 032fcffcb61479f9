"""Runs the official BFCL AST checker (bfcl-eval, installed --no-deps) over decoded outputs.

Input (stdin or --input), one JSON object per line:
    {"category": "parallel", "id": "parallel_3", "output": [{"fn": {"param": value}}]}
Output (stdout or --output), one line per input line, same order:
    {"valid": true} or {"valid": false, "error_type": "..."}

AST categories go through bfcl_eval.eval_checker.ast_eval.ast_checker.ast_checker with the
language the eval runner uses (Java / JavaScript by category name, else Python) and the raw
function docs (the runner loads them with include_language_specific_hint=False). Irrelevance
and relevance categories follow eval_runner._evaluate_single_relevance_entry on an already
decoded output (no call = empty list, [{}] or not in call format). An exception raised by the
checker is reported as error_type "exception".

bfcl_eval.constants.model_config imports every vendor SDK; it is replaced by a stub whose
MODEL_CONFIG_MAPPING answers underscore_to_dot=False for any model (the checker reads only
that field). --bench N times N repetitions of the checking loop and prints the seconds.
"""

import argparse
import collections
import importlib.util
import json
import pathlib
import sys
import time
import types


def stub_model_config():
    module = types.ModuleType("bfcl_eval.constants.model_config")
    config = types.SimpleNamespace(underscore_to_dot=False)
    module.MODEL_CONFIG_MAPPING = collections.defaultdict(lambda: config)
    sys.modules["bfcl_eval.constants.model_config"] = module


def data_dir():
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None:
        sys.exit("bfcl_eval is not installed (pip install --no-deps bfcl-eval==2026.3.23)")
    return pathlib.Path(list(spec.submodule_search_locations)[0]) / "data"


def load(path):
    with open(path) as f:
        return {e["id"]: e for e in (json.loads(line) for line in f if line.strip())}


def is_function_calling_format_output(decoded):
    if type(decoded) != list:
        return False
    for item in decoded:
        if type(item) != dict or len(item) != 1:
            return False
        if type(list(item.values())[0]) != dict:
            return False
    return True


def is_empty_output(decoded):
    if not is_function_calling_format_output(decoded):
        return True
    if len(decoded) == 0:
        return True
    if len(decoded) == 1 and len(decoded[0]) == 0:
        return True
    return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--input")
    parser.add_argument("--output")
    parser.add_argument("--bench", type=int, default=0)
    args = parser.parse_args()

    stub_model_config()
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    source = open(args.input) if args.input else sys.stdin
    cases = [json.loads(line) for line in source if line.strip()]
    root = data_dir()
    entries, answers = {}, {}
    for category in sorted({c["category"] for c in cases}):
        entries[category] = load(root / f"BFCL_v4_{category}.json")
        answer_file = root / "possible_answer" / f"BFCL_v4_{category}.json"
        answers[category] = load(answer_file) if answer_file.exists() else {}

    def language(category):
        if "javascript" in category:
            return Language.JAVASCRIPT
        if "java" in category:
            return Language.JAVA
        return Language.PYTHON

    def verdict(case):
        category = case["category"]
        output = case["output"]
        if "relevance" in category:
            has_call = not is_empty_output(output)
            if "irrelevance" in category:
                if has_call:
                    return {"valid": False, "error_type": "irrelevance_error:decoder_success"}
            elif not has_call:
                return {"valid": False, "error_type": "relevance_error:decoder_failed"}
            return {"valid": True}
        if not is_function_calling_format_output(output):
            return {"valid": False, "error_type": "ast_decoder:decoder_wrong_output_format"}
        entry = entries[category][case["id"]]
        truth = answers[category][case["id"]]["ground_truth"]
        try:
            result = ast_checker(
                entry["function"], output, truth, language(category), category, "toolgate"
            )
        except Exception:  # the Rust checker reports these as ErrorKind::Exception
            return {"valid": False, "error_type": "exception"}
        if result["valid"]:
            return {"valid": True}
        return {"valid": False, "error_type": result["error_type"]}

    if args.bench:
        start = time.perf_counter()
        for _ in range(args.bench):
            for case in cases:
                verdict(case)
        elapsed = time.perf_counter() - start
        print(json.dumps({"cases": len(cases), "repeat": args.bench, "seconds": elapsed}))
        return

    sink = open(args.output, "w") if args.output else sys.stdout
    for case in cases:
        sink.write(json.dumps(verdict(case)) + "\n")
    sink.flush()


if __name__ == "__main__":
    main()
