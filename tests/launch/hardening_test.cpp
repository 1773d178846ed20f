// Issue 28: the launch writer and the importers read as strictly as the job reader. Each input here once crashed
// (unbounded recursion, SIGFPE), hung (a script whose variables double), or was read silently wrong; each must now
// end in a config_error naming the file's line and the rule. The CLI-level reproducers are in
// tests/regress/cli_reproducers.sh, the files in tests/data/launch/hostile (also the fuzzers' seeds).
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>

#include "frenzy/frameworks/deepspeed/import.hpp"
#include "frenzy/frameworks/fsdp/import.hpp"
#include "frenzy/frameworks/megatron/import.hpp"
#include "frenzy/frameworks/torchtitan/import.hpp"
#include "frenzy/io/launcher_shell.hpp"
#include "frenzy/launch/launch.hpp"
#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/model/presets.hpp"
#include "shell.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace {
std::string shell_error(const std::string& script) {
    try {
        read_shell_script(script);
    } catch (const config_error& e) {
        return e.what();
    }
    return "(no error)";
}
import_options recipe_options() {
    import_options o;
    o.model = preset("gpt2");
    o.world_size = 8;
    return o;
}
std::string recipe_error(const std::string& text) {
    try {
        torchtitan_import_text(text, recipe_options());
    } catch (const config_error& e) {
        return e.what();
    }
    return "(no error)";
}

/// A job name hostile to shells, Python and YAML: quotes, command substitution, a command, a comment, a backslash,
/// non-ASCII letters.
const std::string hostile_name = "a\"b'c $(touch PWNED) `touch PWNED`; touch PWNED # \\ \xc3\xbcn\xc3\xaf";

/// A LoRA fine-tune (rank 8 on q and v) of Llama 3.2 1B named hostile_name on `fw`, and its plan: `gpus` H100s on
/// `nodes` nodes.
std::pair<job_spec, plan> hostile_lora(framework fw, precision pr, int gpus, int nodes) {
    job_spec j;
    j.name = hostile_name;
    j.model = preset("llama-3.2-1b");
    j.runtime.framework = fw;
    j.training = {.seq_len = 1024, .micro_batch = 1, .global_batch = 16, .precision = pr, .total_tokens = 16.0 * 1024 * 10};
    j.training.finetune = {.method = finetune_method::lora, .rank = 8, .alpha = 16, .targets = lora_q | lora_v};
    plan p;
    p.gpu = "h100-80g";
    p.gpus = gpus;
    p.nodes = nodes;
    p.framework = fw;
    p.micro_batch = 1;
    return {j, p};
}

/// Each line of `text` that holds PWNED holds it in a comment.
void check_pwned_in_comments(const std::string& text) {
    for (const auto& line : launch_shell::lines_of(text))
        if (line.find("PWNED") != std::string::npos) CHECK(line.find('#') < line.find("PWNED"));
}
}  // namespace

TEST_CASE("the shell reader bounds recursion and growth, and names the line") {
    // 10^4 nested parentheses recursed once each (SIGSEGV); the limit is bounds::shell_depth = 64
    const std::string deep = "A=1\n\nN=$((" + std::string(10000, '(') + "1" + std::string(10000, ')') + "))\n";
    CHECK_THAT(shell_error(deep), Contains("line 3: $(( )) nests parentheses deeper than 64"));
    // 64 levels are read (bash's scripts nest a few)
    std::string closing;  // ") ) )": the reader ends $(( at the first "))"
    for (int i = 0; i < 63; ++i) closing += " )";
    const auto ok = read_shell_script("N=$((" + std::string(63, '(') + "2*3" + closing + " ))\nx.py --n $N\n");
    CHECK(ok.args == std::vector<std::string>{"--n", "6"});
    // B=$B$B forty times would reach 2^40 bytes; the limit is 1 MiB per value (bounds::shell_value_bytes)
    std::string doubling = "B=xx\n";
    for (int i = 0; i < 40; ++i) doubling += "B=$B$B\n";
    // line 20 doubles 2^19 bytes: "B=" and 2 x 2^19 make the word 1 MiB + 2 bytes
    CHECK_THAT(shell_error(doubling), Contains("line 20: a value grows past 1 MiB"));
    // A+=("${A[@]}") doubles an array: 2 elements on line 1, 2^16 after line 16, 2^17 > 65,536 on line 17, refused
    // while expanding (bounds::shell_array_elements), before the 2^20 one-character elements the byte bound let grow
    std::string arrays = "A=(x y)\n";
    for (int i = 0; i < 30; ++i) arrays += "A+=(\"${A[@]}\")\n";
    CHECK_THAT(shell_error(arrays), Contains("line 17: an array grows past 65536 elements"));
    // continued lines count in the numbering: the error is on the physical line the statement starts
    CHECK_THAT(shell_error("A=1 \\\n  B=2\nC='open\n"), Contains("line 3: unterminated ' quote"));
    CHECK_THAT(shell_error("x.py --a \"b\n"), Contains("line 1: unterminated \" quote"));
}

TEST_CASE("shell arithmetic that overflows or divides INT64_MIN by -1 stays text (noted), as bash reports an error") {
    const auto r = read_shell_script("A=$((9223372036854775807 * 2))\nB=$((-9223372036854775807 - 1))\nC=$(($B / -1))\nx.py $A $C\n");
    // each stays its text, noted (the reader has no unary minus either: B is not read); the assignment words split
    // at blanks as bash's do, so A and C hold the first word
    CHECK(r.args == std::vector<std::string>{"$((9223372036854775807", "$(($B"});
    CHECK(r.notes.size() == 3);
}

TEST_CASE("torchtitan recipes: read without std::regex, values bounded, an assignment given twice is an error") {
    // a 60,000-character line crashed std::regex's recursive backtracking
    CHECK_THAT(recipe_error("def f(config):\n    config.training.steps = " + std::string(60000, 'x') + "\n"),
               Contains("line 2: config.training.steps = xxxx"));
    CHECK_THAT(recipe_error("def f(config):\n    config.training.max_context_length = 0\n"),
               Contains("line 2: config.training.max_context_length=0 must be in 1..67108864"));  // was SIGFPE
    CHECK_THAT(recipe_error("def f(config):\n    config.training.steps = 10\n    config.training.steps = 20\n"),
               Contains("line 3: config.training.steps is assigned again (first on line 2)"));
    CHECK_THAT(recipe_error("config.parallelism.tensor_parallel_degree = 0\n"),
               Contains("config.parallelism.tensor_parallel_degree=0 must be in 1.."));
    // what it reads: comments dropped, blanks around '=', comparisons (==) are not assignments
    const auto r = torchtitan_import_text("def f(config):\n  config.parallelism.tensor_parallel_degree=2  # tp\n"
                                          "  if config.training.steps == 3: pass\n", recipe_options());
    CHECK(r.job.parallel.tp == 2);
    CHECK(r.job.parallel.dp == 4);  // shard -1: the 8 GPUs over tp 2
}

TEST_CASE("DeepSpeed: both precisions, products past 2^63 and a contradicting world size are errors") {
    auto ds = [](const std::string& text, std::int64_t world) {
        auto o = recipe_options();
        o.world_size = world;
        try {
            deepspeed_import_json(nlohmann::json::parse(text), o);
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    CHECK_THAT(ds(R"({"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}, "fp16": {"enabled": true}})", 8),
               Contains("bf16.enabled and fp16.enabled are both true"));
    CHECK_THAT(ds(R"({"train_micro_batch_size_per_gpu": 1048576, "gradient_accumulation_steps": 1073741824, "train_batch_size": 1073741824})", 0),
               Contains("is not a multiple of"));
    CHECK_THAT(ds(R"({"train_micro_batch_size_per_gpu": 2, "train_batch_size": 32})", 8),  // 32 / 2 = 16 ranks, not 8
               Contains("contradicts the world size 8"));
    CHECK(ds(R"({"train_micro_batch_size_per_gpu": 2, "train_batch_size": 16})", 8) == "(no error)");
}

TEST_CASE("launch: the time margin is checked and --time is capped at Slurm's largest with the reason") {
    CHECK(slurm_time(59) == "00:01:00");
    CHECK(slurm_time(86400 * 2 + 3600) == "2-01:00:00");
    CHECK(slurm_time(1e30) == "24855-00:00:00");  // src/common/parse_time.c: an int of seconds
    CHECK_THROWS_WITH(slurm_time(std::nan("")), Contains("must be a finite number"));
}

TEST_CASE("launch: the run command is one line of the batch script with its quotes closed (found by fuzz_launch_writer)") {
    CHECK_NOTHROW(check_run_command("train.py --name 'a b' --x \"c d\" e\\ f"));
    CHECK_NOTHROW(check_run_command(""));
    CHECK_THROWS_WITH(check_run_command(std::string("tr\x01" "ain.py")), Contains("control character (\\x01 at byte 2)"));
    CHECK_THROWS_WITH(check_run_command("a\nrm -rf x"), Contains("control character"));
    // an escaped control character is one too (fuzz_launch_writer, 2026-12-04: "n\\...\\\x01" passed the check
    // because the backslash skipped the byte after it)
    CHECK_THROWS_WITH(check_run_command(std::string("a\\\x01" "b")), Contains("control character (\\x01 at byte 2)"));
    CHECK_THROWS_WITH(check_run_command(std::string("'a'\\\n")), Contains("at byte 4"));
    CHECK_THROWS_WITH(check_run_command("a'b"), Contains("leaves a quote or a backslash open"));
    CHECK_THROWS_WITH(check_run_command("a \"b"), Contains("leaves a quote or a backslash open"));
    CHECK_THROWS_WITH(check_run_command("a \\"), Contains("leaves a quote or a backslash open"));
    // shell words only (issue 57 item 3): what the batch shell would run itself, outside srun, is refused; quoted
    // or escaped, the same characters are an argument's text, and $VARIABLES expand as the help says
    CHECK_NOTHROW(check_run_command("train.py --data \"$DATA_DIR\" --tag 'a;b|c $(x)' x\\;y"));
    for (const std::string bad : {"train.py; rm -rf x", "a && b", "a | tee log", "a > log", "(train.py", "a `id`",
                                  "a $(id)", "a \"$(id)\"", "a \"`id`\"", "a &"})
        CHECK_THROWS_WITH(check_run_command(bad), Contains("which the batch shell would run itself"));
    CHECK_THROWS_WITH(check_run_command("a $(id)"), Contains("holds $( at byte 2"));
    CHECK_THROWS_WITH(check_run_command("   "), Contains("is blank"));
}

TEST_CASE("litgpt launcher: hostile job and model names never reach litgpt.yaml or the command line") {
    // The YAML holds numbers, booleans and names of frameworks/litgpt/traits.hpp only; the job name reaches the
    // batch script as launch.hpp writes every launcher's (a comment and one --job-name word).
    const std::string& hostile = hostile_name;
    auto [j, p] = hostile_lora(frameworks::litgpt::handle, precision::bf16, 1, 1);
    launch_options o;
    o.launcher = frameworks::litgpt::launcher_handle;
    const auto files = launch_files(j, p, o);
    REQUIRE(files.size() == 2);
    CHECK(files[1].content.find("PWNED") == std::string::npos);  // litgpt.yaml: nothing of the name
    CHECK(files[1].content.find(hostile) == std::string::npos);
    check_pwned_in_comments(files[0].content);
    // the model name is LitGPT's config or refused, printable, naming the field
    auto h = j;
    h.model.name = hostile;
    CHECK_THROWS_WITH(launch_files(h, p, o), Catch::StartsWith("model.name=") && Contains("has no LitGPT model config"));
    for (const std::string bad : {"x\nrm -rf $HOME #", "x\rimport os", "a\x1b[2Jb", "\xff\xfe"}) {
        h = j;
        h.model.name = bad;
        CHECK_THROWS_WITH(launch_files(h, p, o), Catch::StartsWith("model.name="));
        h = j;
        h.name = bad;
        CHECK_THROWS_WITH(launch_files(h, p, o), Catch::StartsWith("name="));
    }
    // run_command is checked as for every launcher, then written before the LitGPT command's arguments
    o.run_command = "wrapper.py --x 'a b'";
    CHECK(launch_files(j, p, o)[0].content.find("wrapper.py --x 'a b' finetune_lora --config \"$LAUNCH_DIR/litgpt.yaml\"") !=
          std::string::npos);
    o.run_command = "a\nrm -rf x";
    CHECK_THROWS_WITH(launch_files(j, p, o), Contains("control character"));
}

TEST_CASE("hf launcher, sharded: hostile names never reach accelerate_config.yaml, frenzy_hf_train.py or a command") {
    // accelerate_config.yaml holds numbers, booleans and names of closed sets (frameworks/hf/accelerate.hpp); the job
    // name reaches the batch script as a comment and one --job-name word; the model's name is not written (MODEL is
    // the batch script's environment). Written to disk: bash -n, Python's parser and PyYAML read them.
    const std::string hostile = hostile_name + "\nrm -rf x";
    auto [j, p] = hostile_lora(frameworks::hf::handle, precision::bf16_mixed, 16, 2);
    launch_options o;
    o.launcher = frameworks::hf::launcher_handle;
    const auto dir = std::filesystem::temp_directory_path() / "frenzy_hf_hostile";
    for (const auto sh : {sharding::gradients, sharding::full}) {
        j.parallel = {.dp = 16, .sharding = sh};
        const auto files = launch_files(j, p, o);
        REQUIRE(files.size() == 3);
        std::filesystem::remove_all(dir);
        const auto paths = write_launch_files(files, dir.string());
        for (std::size_t i = 0; i < files.size(); ++i) {
            INFO(files[i].name << ":\n" << files[i].content);
            check_pwned_in_comments(files[i].content);
            if (files[i].name == "accelerate_config.yaml") {
                CHECK(files[i].content.find("PWNED") == std::string::npos);
                CHECK(launch_shell::run("python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); "
                                        "assert isinstance(d[\"num_processes\"], int) and d[\"mixed_precision\"] == \"bf16\"' '" +
                                        paths[i] + "' 2>&1").first == 0);
            }
            if (files[i].name.ends_with(".sbatch")) CHECK(launch_shell::run("bash -n '" + paths[i] + "' 2>&1").first == 0);
            if (files[i].name.ends_with(".py"))
                CHECK(launch_shell::run("python3 -c 'import ast, sys; ast.parse(open(sys.argv[1], encoding=\"utf-8\").read())' '" +
                                        paths[i] + "' 2>&1").first == 0);
        }
        for (const std::string bad : {"x\nrm -rf $HOME #", "x\rimport os", "a\x1b[2Jb", "\xff\xfe"}) {
            auto h = j;
            h.name = bad;
            CHECK_THROWS_WITH(launch_files(h, p, o), Catch::StartsWith("name="));
        }
        // run_command is checked as for every launcher, then handed to accelerate launch as its script and arguments
        auto with = o;
        with.run_command = "wrapper.py --x 'a b'";
        CHECK(launch_files(j, p, with)[0].content.find("\"$HEAD_NODE\" wrapper.py --x 'a b' &\n") != std::string::npos);
        with.run_command = hostile;
        CHECK_THROWS_WITH(launch_files(j, p, with), Contains("control character"));
    }
    std::filesystem::remove_all(dir);
}
