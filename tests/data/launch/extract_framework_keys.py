#!/usr/bin/env python3
"""Lists every command-line flag / config key a framework defines, read statically (ast, no imports) from its
source tree, for tests/launch: each flag or key `frenzy launch` writes must be in these lists.

  extract_framework_keys.py megatron   REPO_DIR > megatron_arguments.txt
  extract_framework_keys.py deepspeed  REPO_DIR > deepspeed_keys.txt
  extract_framework_keys.py torchtitan REPO_DIR > torchtitan_fields.txt
  extract_framework_keys.py llm-foundry LLM_FOUNDRY_DIR COMPOSER_DIR > llm_foundry_keys.txt
  extract_framework_keys.py hf TRANSFORMERS_SRC PEFT_SRC > hf_keys.txt
  extract_framework_keys.py torchtune TORCHTUNE_DIR > torchtune_keys.txt
  extract_framework_keys.py litgpt REPO_DIR > litgpt_keys.txt
  extract_framework_keys.py litgpt-models REPO_DIR > litgpt_models.txt
  extract_framework_keys.py accelerate REPO_DIR > accelerate_keys.txt
  extract_framework_keys.py axolotl REPO_DIR > axolotl_keys.txt
  extract_framework_keys.py llamafactory REPO_DIR > llamafactory_keys.txt

Megatron-LM: literal '--flags' of megatron/training/arguments.py plus the flags ArgumentGroupFactory
(megatron/training/argument_utils.py) derives from the config dataclasses named in arguments.py: `--name-with-dashes`;
bool fields whose default is not False become `--no-name` and `--disable-name`; metadata argparse_meta arg_names win;
`exclude=[...]` lists and init=False fields are skipped.
DeepSpeed: string constants of deepspeed/runtime/constants.py, runtime/zero/config.py, runtime/zero/offload_config.py,
runtime/activation_checkpointing/config.py, runtime/precision_config.py (pydantic field names and aliases too).
llm-foundry: dotted YAML paths train.py accepts: TrainConfig's fields (llmfoundry/utils/config_utils.py); under
`model.` MPTConfig.__init__'s arguments, ComposerMPTCausalLM's and `name`; under `model.attn_config.` the keys of
attn_config_defaults and GroupedQueryAttention's arguments; under `model.ffn_config.` build_mptglu's arguments and
`ffn_type`; under `fsdp_config.` Composer's FSDPConfig fields (composer/utils/parallelism.py); the arguments of the
text dataloader and StreamingTextDataset, DecoupledAdamW, CosineAnnealingWithWarmupScheduler and GradientClipping
under their sections.
hf: the keywords frenzy_hf_train.py may pass: `TrainingArguments.<field>` (transformers'
src/transformers/training_args.py dataclass), `BitsAndBytesConfig.<argument>` (its __init__ in
src/transformers/utils/quantization_config.py) and `LoraConfig.<field>` (PEFT's src/peft/tuners/lora/config.py,
with the fields of its base classes PeftConfig and PeftConfigMixin of src/peft/config.py); TRANSFORMERS_SRC and
PEFT_SRC are the folders holding the `transformers` and `peft` packages (each repository's src/).
torchtune: the top-level config keys the four fine-tuning recipes read (recipes/{full,lora}_finetune_{distributed,
single_device}.py: cfg.get("key"), cfg.key, cfg["key"]); `section.key` paths of the recipe configs torchtune ships
(recipes/configs/**/*.yaml: the components' own arguments, e.g. model.lora_rank, optimizer.fused); `loss.ARG` for the
__init__ arguments of LinearCrossEntropyLoss and CEWithChunkedOutputLoss (torchtune/modules/loss/);
`builder.NAME` for every model builder torchtune/models/*/__init__.py exports (what model._component_ may name).
litgpt: `COMMAND.key` for the jsonargparse CLI of litgpt/__main__.py (PARSER_DATA): each entry function's parameters
(finetune_lora, finetune_full, finetune_adapter, finetune_adapter_v2, pretrain), and for a parameter annotated with a
dataclass of litgpt/args.py (TrainArgs, EvalArgs, LogArgs) `COMMAND.param.field` for each of its fields.
litgpt-models: one line per model config of litgpt/config.py (the `configs` dicts): the config name, the Hugging Face
org/name it is downloaded from, n_layer and n_embd (Config's dataclass defaults where a dict leaves them out), with
the `{}` of a name family formatted as "" (the base model; __main__ formats "-chat"/"-instruct" variants too).
accelerate: the keys of an `accelerate launch --config_file` YAML: the top-level keys are the fields of ClusterConfig
and its base BaseConfig (src/accelerate/commands/config/config_args.py; from_yaml_file refuses any other key);
`fsdp_config.KEY` and `deepspeed_config.KEY` for the destinations of launch.py's "FSDP Arguments" and "DeepSpeed
Arguments" argument groups (src/accelerate/commands/launch.py: launch_command copies each key of those sections onto
the parsed arguments, fsdp_config keys under their fsdp_ name).
torchtitan: dotted `section.field` names of the dataclasses Trainer.Config composes (torchtitan/config/configs.py,
activation_checkpoint.py), as config attributes are spelled in a recipe.
"""
import ast
import os
import re
import sys


def parse(path):
    with open(path) as f:
        return ast.parse(f.read(), path)


def module_file(root, mod):
    p = os.path.join(root, *mod.split("."))
    if os.path.isdir(p):
        return os.path.join(p, "__init__.py")
    return p + ".py"


def resolve_class(root, mod, name, depth=0):
    """(ClassDef, module) of `name` as seen from module `mod`, following `from X import name`."""
    if depth > 8:
        return None
    f = module_file(root, mod)
    if not os.path.exists(f):
        return None
    tree = parse(f)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node, mod
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if (a.asname or a.name) == name:
                    src = node.module or ""
                    if node.level:
                        base = mod.split(".")
                        if not f.endswith("__init__.py"):
                            base = base[:-1]
                        base = base[: len(base) - (node.level - 1)]
                        src = ".".join(base + ([src] if src else []))
                    r = resolve_class(root, src, a.name, depth + 1)
                    if r:
                        return r
    return None


def const(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return None


def is_bool(ann):
    s = ast.unparse(ann).replace(" ", "")
    return s in ("bool", "Optional[bool]", "bool|None", "None|bool")


def dataclass_fields(root, cls, mod, seen=None):
    out = []
    for b in cls.bases:
        bn = ast.unparse(b)
        if bn in ("object",) or "." in bn:
            continue
        r = resolve_class(root, mod, bn)
        if r:
            out += dataclass_fields(root, r[0], r[1])
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            ann = ast.unparse(node.annotation)
            if "ClassVar" in ann:
                continue
            default, meta, init = None, None, True
            v = node.value
            if isinstance(v, ast.Call) and ast.unparse(v.func).split(".")[-1] == "field":
                for k in v.keywords:
                    if k.arg == "default":
                        default = k.value
                    elif k.arg == "metadata":
                        meta = k.value
                    elif k.arg == "init":
                        init = const(k.value) is not False
            else:
                default = v
            out = [o for o in out if o[0] != node.target.id]
            out.append((node.target.id, node.annotation, default, meta, init))
    return out


def flag(name, prefix=None):
    return "--" + ((prefix + "_") if prefix else "").replace("_", "-") + name.replace("_", "-")


def megatron(root):
    args = os.path.join(root, "megatron/training/arguments.py")
    tree = parse(args)
    flags = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("add_argument"):
            for a in node.args:
                v = const(a)
                if isinstance(v, str) and v.startswith("--"):
                    flags.add(v)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "ArgumentGroupFactory":
            cname = ast.unparse(node.args[0])
            exclude = set()
            for k in node.keywords:
                if k.arg == "exclude":
                    ev = const(k.value)
                    if ev is None and isinstance(k.value, ast.Name):  # exclude=exclude: the list assigned before
                        for n2 in ast.walk(tree):
                            if isinstance(n2, ast.Assign) and any(isinstance(t, ast.Name) and t.id == k.value.id for t in n2.targets):
                                if getattr(n2, "lineno", 0) < node.lineno:
                                    ev = const(n2.value)
                    exclude = set(ev or [])
            r = resolve_class(root, "megatron.training.arguments", cname)
            if not r:
                print("unresolved " + cname, file=sys.stderr)
                continue
            for name, ann, default, meta, init in dataclass_fields(root, r[0], r[1]):
                if name in exclude or not init:
                    continue
                names = None
                if meta is not None and isinstance(meta, ast.Dict):
                    for k, v in zip(meta.keys, meta.values):
                        if const(k) == "argparse_meta" and isinstance(v, ast.Dict):
                            for k2, v2 in zip(v.keys, v.values):
                                if const(k2) == "arg_names":
                                    names = const(v2)
                if names is None:
                    if is_bool(ann) and not (isinstance(default, ast.Constant) and default.value is False):
                        names = [flag(name, "no"), flag(name, "disable")]
                    else:
                        names = [flag(name)]
                flags.update(names)
    return sorted(flags)


def string_constants(path):
    keys = set()
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            if all(isinstance(t, ast.Name) and t.id.isupper() and not t.id.endswith("_DEFAULT") for t in node.targets):
                keys.add(node.value.value)
        if isinstance(node, ast.ClassDef):  # pydantic models: field names and Field(alias=...)
            for b in node.body:
                if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name):
                    keys.add(b.target.id)
                    if isinstance(b.value, ast.Call):
                        for k in b.value.keywords:
                            if k.arg == "alias" and isinstance(const(k.value), str):
                                keys.add(const(k.value))
    return keys


def deepspeed(root):
    keys = set()
    for rel in ["deepspeed/runtime/constants.py", "deepspeed/runtime/zero/config.py",
                "deepspeed/runtime/zero/offload_config.py", "deepspeed/runtime/zero/offload_constants.py",
                "deepspeed/runtime/activation_checkpointing/config.py", "deepspeed/runtime/precision_config.py",
                "deepspeed/runtime/fp16/loss_scaler.py"]:
        p = os.path.join(root, rel)
        if os.path.exists(p):
            keys |= string_constants(p)
    return sorted(k for k in keys if k and " " not in k and k.replace("_", "").isalnum())


def torchtitan(root):
    out = set()
    sections = {"training": "TrainingConfig", "parallelism": "ParallelismConfig", "compile": "CompileConfig",
                "comm": "CommConfig", "debug": "DebugConfig"}
    for sec, cname in sections.items():
        r = resolve_class(root, "torchtitan.config.configs", cname)
        for name, *_ in dataclass_fields(root, r[0], r[1]):
            out.add(sec + "." + name)
    # activation_checkpoint: ActivationCheckpointing.Config subclasses (FullAC, SelectiveAC, ...)
    ac = parse(os.path.join(root, "torchtitan/distributed/activation_checkpoint.py"))
    for node in ac.body:
        if isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, ast.ClassDef) and inner.name == "Config":
                    out.add("activation_checkpoint=" + node.name + ".Config")
                    for b in inner.body:
                        if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name):
                            out.add("activation_checkpoint." + b.target.id)
    # the recipe's top-level fields (Trainer.Config, torchtitan/trainer.py), its checkpoint section
    # (BaseCheckpointManager.Config, components/checkpointer/base.py) and its data loader's (GrainDataLoader.Config,
    # components/data/loader.py): the settings block of frenzy_torchtitan.py sets these
    for rel, cls, prefix in (("torchtitan/trainer.py", "Trainer", ""),
                             ("torchtitan/components/checkpointer/base.py", "BaseCheckpointManager", "checkpoint."),
                             ("torchtitan/components/data/loader.py", "GrainDataLoader", "dataloader.")):
        for node in parse(os.path.join(root, rel)).body:
            if isinstance(node, ast.ClassDef) and node.name == cls:
                for inner in node.body:
                    if isinstance(inner, ast.ClassDef) and inner.name == "Config":
                        out.update(prefix + b.target.id for b in inner.body
                                   if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name))
    base_fields = []  # QuantizationConverter.Config fields every converter inherits
    for node in parse(os.path.join(root, "torchtitan/components/quantization/__init__.py")).body:
        if isinstance(node, ast.ClassDef) and node.name == "QuantizationConverter":
            for inner in node.body:
                if isinstance(inner, ast.ClassDef) and inner.name == "Config":
                    base_fields = [b.target.id for b in inner.body if isinstance(b, ast.AnnAssign)]
    for node in [n for f in ("float8.py", "mx.py")
                 for n in parse(os.path.join(root, "torchtitan/components/quantization", f)).body]:
        if isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, ast.ClassDef) and inner.name == "Config":
                    out.add("converter=" + node.name + ".Config")
                    out.update(node.name + ".Config." + f for f in base_fields)
                    for b in inner.body:
                        if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name):
                            out.add(node.name + ".Config." + b.target.id)
    return sorted(out)


def init_args(root, mod, cls_name=None, func_name=None):
    """Argument names of class `cls_name`'s __init__ (or of function `func_name`) in module `mod`."""
    tree = parse(module_file(root, mod))
    for node in ast.walk(tree):
        if cls_name and isinstance(node, ast.ClassDef) and node.name == cls_name:
            for b in node.body:
                if isinstance(b, ast.FunctionDef) and b.name == "__init__":
                    return [a.arg for a in b.args.args + b.args.kwonlyargs if a.arg != "self"]
        if func_name and isinstance(node, ast.FunctionDef) and node.name == func_name:
            return [a.arg for a in node.args.args + node.args.kwonlyargs]
    raise SystemExit(f"{cls_name or func_name} not found in {mod}")


def dict_keys(root, mod, var):
    for node in parse(module_file(root, mod)).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == var for t in targets):
                return list(const(node.value).keys())
    raise SystemExit(f"{var} not found in {mod}")


def class_fields(root, mod, name):
    cls, m = resolve_class(root, mod, name)
    return [b.target.id for b in cls.body if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name)]


def llm_foundry(root, composer_root):
    out = set(class_fields(root, "llmfoundry.utils.config_utils", "TrainConfig"))
    sections = {
        "model": init_args(root, "llmfoundry.models.mpt.configuration_mpt", "MPTConfig") +
        init_args(root, "llmfoundry.models.mpt.modeling_mpt", "ComposerMPTCausalLM") + ["name"] +
        # hf_causal_lm (models/__init__.py registers ComposerHFCausalLM): BaseHuggingFaceModel's arguments
        init_args(root, "llmfoundry.models.hf.hf_base", "BaseHuggingFaceModel"),
        "model.attn_config": dict_keys(root, "llmfoundry.models.utils.config_defaults", "attn_config_defaults") +
        init_args(root, "llmfoundry.models.layers.attention", "GroupedQueryAttention"),
        "model.ffn_config": init_args(root, "llmfoundry.models.layers.ffn", func_name="build_mptglu") + ["ffn_type"],
        "model.ffn_config.ffn_act_fn": ["name"],
        # rope_hf_config's default keys (config_defaults.py) and those transformers' llama3 rotary embedding reads
        # from it (modeling_mpt.py gen_rotary_embedding passes it as rope_scaling; modeling_rope_utils.py
        # _compute_llama3_parameters)
        "model.attn_config.rope_hf_config": ["type", "factor", "low_freq_factor", "high_freq_factor",
                                             "original_max_position_embeddings"],
        "fsdp_config": class_fields(composer_root, "composer.utils.parallelism", "FSDPConfig"),
        "tokenizer": ["name", "kwargs"],
        "tokenizer.kwargs": ["model_max_length"],
        "train_loader": init_args(root, "llmfoundry.data.text_data", func_name="build_text_dataloader") + ["name"],
        "train_loader.dataset": init_args(root, "llmfoundry.data.text_data", "StreamingTextDataset"),
        "optimizer": init_args(composer_root, "composer.optim.decoupled_weight_decay", "DecoupledAdamW") + ["name"],
        "scheduler": init_args(composer_root, "composer.optim.scheduler", "CosineAnnealingWithWarmupScheduler") + ["name"],
        "algorithms.gradient_clipping": init_args(
            composer_root, "composer.algorithms.gradient_clipping.gradient_clipping", "GradientClipping"),
    }
    for section, keys in sections.items():
        out.update(section + "." + k for k in keys if k not in ("tokenizer", "device_batch_size"))
    out.add("algorithms.gradient_clipping")
    return sorted(out)


def hf(transformers_src, peft_src):
    out = set()
    cls, mod = resolve_class(transformers_src, "transformers.training_args", "TrainingArguments")
    out.update("TrainingArguments." + f[0] for f in dataclass_fields(transformers_src, cls, mod) if f[4])
    out.update("BitsAndBytesConfig." + a for a in init_args(transformers_src, "transformers.utils.quantization_config",
                                                             "BitsAndBytesConfig") if a != "kwargs")
    cls, mod = resolve_class(peft_src, "peft.tuners.lora.config", "LoraConfig")
    out.update("LoraConfig." + f[0] for f in dataclass_fields(peft_src, cls, mod) if f[4])
    return sorted(out)


def accelerate(root):
    src = os.path.join(root, "src")
    cls, mod = resolve_class(src, "accelerate.commands.config.config_args", "ClusterConfig")
    out = {f[0] for f in dataclass_fields(src, cls, mod)}
    groups = {"fsdp_args": "fsdp_config.", "deepspeed_args": "deepspeed_config."}
    for node in ast.walk(parse(os.path.join(src, "accelerate", "commands", "launch.py"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        group = ast.unparse(node.func.value)
        if group not in groups:
            continue
        dest = next((const(k.value) for k in node.keywords if k.arg == "dest"), None)
        names = [const(a) for a in node.args if isinstance(const(a), str)]
        longs = [n for n in names if n.startswith("--")]
        if dest is None and longs:
            dest = longs[0][2:].replace("-", "_")
        if dest:
            out.add(groups[group] + dest)
    return sorted(out)


TORCHTUNE_RECIPES = ["full_finetune_distributed", "full_finetune_single_device", "lora_finetune_distributed",
                     "lora_finetune_single_device"]


def yaml_paths(text):
    """`section.key` paths of a recipe config (indentation-nested `key:` lines; list items and comments skipped)."""
    out, stack = set(), []
    for line in text.splitlines():
        body = line.split("#", 1)[0].rstrip()
        if not body.strip() or body.lstrip().startswith("-"):
            continue
        m = re.match(r"^( *)([A-Za-z_][A-Za-z0-9_]*):", body)
        if not m:
            continue
        depth = len(m.group(1))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, m.group(2)))
        if len(stack) > 1:
            out.add(".".join(k for _, k in stack))
    return out


def torchtune(root):
    out = set()
    for r in TORCHTUNE_RECIPES:
        text = open(os.path.join(root, "recipes", r + ".py")).read()
        out.update(re.findall(r'\bcfg\.get\(\s*"([A-Za-z_][A-Za-z0-9_]*)"', text))
        out.update(re.findall(r'\bcfg\[\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*\]', text))
        out.update(k for k in re.findall(r"\bcfg\.([A-Za-z_][A-Za-z0-9_]*)", text) if k not in ("get", "pop", "keys", "items"))
    for d, _, files in os.walk(os.path.join(root, "recipes", "configs")):
        for f in files:
            if f.endswith(".yaml"):
                out.update(yaml_paths(open(os.path.join(d, f)).read()))
    for mod, cls in (("torchtune.modules.loss.cross_entropy_loss", "LinearCrossEntropyLoss"),
                     ("torchtune.modules.loss.ce_chunked_output_loss", "CEWithChunkedOutputLoss")):
        out.update("loss." + a for a in init_args(root, mod, cls))
    models = os.path.join(root, "torchtune", "models")
    for family in sorted(os.listdir(models)):
        init = os.path.join(models, family, "__init__.py")
        if not os.path.exists(init):
            continue
        for node in parse(init).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                out.update("builder.torchtune.models." + family + "." + const(e) for e in node.value.elts)
    return sorted(out)


def litgpt(root):
    tree = parse(module_file(root, "litgpt.__main__"))
    entries = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                entries[a.asname or a.name] = (node.module, a.name)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PARSER_DATA" for t in node.targets):
            commands = {const(k): ast.unparse(v) for k, v in zip(node.value.keys, node.value.values)}
    out = set()
    for command in ("finetune_lora", "finetune_full", "finetune_adapter", "finetune_adapter_v2", "pretrain"):
        mod, func = entries[commands[command]]
        for node in ast.walk(parse(module_file(root, mod))):
            if isinstance(node, ast.FunctionDef) and node.name == func:
                for a in node.args.args + node.args.kwonlyargs:
                    out.add(command + "." + a.arg)
                    ann = ast.unparse(a.annotation) if a.annotation else ""
                    if ann in ("TrainArgs", "EvalArgs", "LogArgs"):
                        cls, m = resolve_class(root, "litgpt.args", ann)
                        out.update(command + "." + a.arg + "." + f[0] for f in dataclass_fields(root, cls, m) if f[4])
                break
    return sorted(out)


def litgpt_models(root):
    tree = parse(module_file(root, "litgpt.config"))
    cls, m = resolve_class(root, "litgpt.config", "Config")
    defaults = {f[0]: const(f[2]) for f in dataclass_fields(root, cls, m)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "dict":
            kw = {k.arg: k.value for k in node.keywords}
            if "name" in kw and "hf_config" in kw and isinstance(kw["name"], ast.Constant):
                hf = {k.arg: const(k.value) for k in kw["hf_config"].keywords}
                layers = const(kw["n_layer"]) if "n_layer" in kw else defaults["n_layer"]
                hidden = const(kw["n_embd"]) if "n_embd" in kw else defaults["n_embd"]
                out.append("%s %s/%s %s %s" % (kw["name"].value.format(""), hf["org"], hf["name"].format(""), layers, hidden))
    return sorted(out)


def class_body_fields(path):
    """Field names (annotated assignments) of every class of a Python file, with those of its nested classes."""
    out = set()
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.ClassDef):
            out.update(n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
    return out


def axolotl(root):
    """The keys of config.yml: the fields of every config model under src/axolotl/utils/schemas/ (AxolotlInputConfig
    composes them; FSDPConfig's are fsdp_config's keys) and of the integrations' args.py models (liger_*, ...)."""
    out = set()
    for base in ("src/axolotl/utils/schemas", "src/axolotl/integrations"):
        for dirpath, _, files in os.walk(os.path.join(root, base)):
            for f in files:
                if f.endswith(".py") and (base.endswith("schemas") or f == "args.py"):
                    out |= class_body_fields(os.path.join(dirpath, f))
    return sorted(out)


def llamafactory(root):
    """The keys of train.yaml that LLaMA-Factory defines: the fields of the argument dataclasses of
    src/llamafactory/hparams/*.py (transformers' TrainingArguments fields are in hf_keys.txt)."""
    out = set()
    d = os.path.join(root, "src", "llamafactory", "hparams")
    for f in sorted(os.listdir(d)):
        if f.endswith(".py"):
            out |= class_body_fields(os.path.join(d, f))
    return sorted(out)


if __name__ == "__main__":
    which, root = sys.argv[1], sys.argv[2]
    if which == "llm-foundry":
        keys = llm_foundry(root, sys.argv[3])
    elif which == "hf":
        keys = hf(root, sys.argv[3])
    elif which in ("litgpt", "litgpt-models"):
        keys = (litgpt if which == "litgpt" else litgpt_models)(root)
    else:
        keys = {"axolotl": axolotl, "llamafactory": llamafactory, "accelerate": accelerate, "megatron": megatron, "deepspeed": deepspeed, "torchtitan": torchtitan, "torchtune": torchtune}[which](root)
    for k in keys:
        print(k)
