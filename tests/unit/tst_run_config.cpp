// RunConfig: the YAML a user writes for `autocomp run` and the New Run dialog (DESIGN.md §8).
#include "model/run_config.h"

#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using autocomp::RunConfig;

namespace {

const QString FileName = u"runs/my_run.yaml"_s;

// Compares every field a user can set; a field toYaml() forgets to write makes this fail.
void compareConfigs(const RunConfig &actual, const RunConfig &expected)
{
    QCOMPARE(actual.target, expected.target);
    QCOMPARE(actual.problem, expected.problem);
    QCOMPARE(actual.agent, expected.agent);
    QCOMPARE(actual.planModels, expected.planModels);
    QCOMPARE(actual.codeModels, expected.codeModels);
    QCOMPARE(actual.search.iterations, expected.search.iterations);
    QCOMPARE(actual.search.beamWidth, expected.search.beamWidth);
    QCOMPARE(actual.search.plansPerParent, expected.search.plansPerParent);
    QCOMPARE(actual.search.codePerPlan, expected.search.codePerPlan);
    QCOMPARE(actual.search.menuDropout, expected.search.menuDropout);
    QCOMPARE(actual.search.newIdeaProbability, expected.search.newIdeaProbability);
    QCOMPARE(actual.search.fixAttempts, expected.search.fixAttempts);
    QCOMPARE(actual.search.parentSlack, expected.search.parentSlack);
    QCOMPARE(actual.search.seed, expected.search.seed);
    QCOMPARE(actual.search.translateIters, expected.search.translateIters);
    QCOMPARE(actual.search.translateThreshold, expected.search.translateThreshold);
    QCOMPARE(actual.search.editMode, expected.search.editMode);
    QCOMPARE(actual.search.earlyStop, expected.search.earlyStop);
    QCOMPARE(actual.search.earlyStopPatience, expected.search.earlyStopPatience);
    QCOMPARE(actual.search.schedule, expected.search.schedule);
    QCOMPARE(actual.budget.maxUsd, expected.budget.maxUsd);
    QCOMPARE(actual.budget.maxLlmCalls, expected.budget.maxLlmCalls);
    QCOMPARE(actual.budget.maxHours, expected.budget.maxHours);
    QCOMPARE(actual.evaluation.executor, expected.evaluation.executor);
    QCOMPARE(actual.evaluation.parallelCompiles, expected.evaluation.parallelCompiles);
    QCOMPARE(actual.evaluation.benchSlots, expected.evaluation.benchSlots);
    QCOMPARE(actual.evaluation.sandbox, expected.evaluation.sandbox);
    QCOMPARE(actual.evaluation.keepWorkdirs, expected.evaluation.keepWorkdirs);
    QCOMPARE(actual.evaluation.benchIsolation, expected.evaluation.benchIsolation);
    QCOMPARE(actual.llm.maxAnswerBytes, expected.llm.maxAnswerBytes);
    QCOMPARE(actual.llm.maxPromptBytes, expected.llm.maxPromptBytes);
    QCOMPARE(actual.llm.reuseAcrossRuns, expected.llm.reuseAcrossRuns);
    QCOMPARE(actual.evaluation.profile, expected.evaluation.profile);
    QCOMPARE(actual.evaluation.hosts.size(), expected.evaluation.hosts.size());
    for (qsizetype i = 0; i < actual.evaluation.hosts.size(); ++i) {
        QCOMPARE(actual.evaluation.hosts.at(i).label(), expected.evaluation.hosts.at(i).label());
        QCOMPARE(actual.evaluation.hosts.at(i).slots, expected.evaluation.hosts.at(i).slots);
    }
    QCOMPARE(actual.evaluation.sshKnownHosts, expected.evaluation.sshKnownHosts);
    QCOMPARE(actual.evaluation.sshIdentity, expected.evaluation.sshIdentity);
    QCOMPARE(actual.evaluation.sshConnectTimeoutS, expected.evaluation.sshConnectTimeoutS);
    QCOMPARE(actual.evaluation.remoteCommand, expected.evaluation.remoteCommand);
    QCOMPARE(actual.evaluation.remoteWorkdir, expected.evaluation.remoteWorkdir);
    QCOMPARE(actual.evaluation.remoteRetries, expected.evaluation.remoteRetries);
    QCOMPARE(actual.evaluation.slurmPartition, expected.evaluation.slurmPartition);
    QCOMPARE(actual.evaluation.slurmGres, expected.evaluation.slurmGres);
    QCOMPARE(actual.evaluation.slurmTime, expected.evaluation.slurmTime);
    QCOMPARE(actual.evaluation.slurmMem, expected.evaluation.slurmMem);
    QCOMPARE(actual.evaluation.slurmSlots, expected.evaluation.slurmSlots);
    QCOMPARE(actual.evaluation.slurmSharedDir, expected.evaluation.slurmSharedDir);
    QCOMPARE(actual.evaluation.slurmPollMs, expected.evaluation.slurmPollMs);
    QCOMPARE(actual.evaluation.slurmBatch, expected.evaluation.slurmBatch);
    QCOMPARE(actual.evaluation.slurmBatchWaitMs, expected.evaluation.slurmBatchWaitMs);
    QCOMPARE(actual.evaluation.slurmCpus, expected.evaluation.slurmCpus);
    QCOMPARE(actual.evaluation.placement, expected.evaluation.placement);
}

RunConfig minimalConfig()
{
    RunConfig c;
    c.problem = u"gemm"_s;
    c.planModels = {u"openai::gpt-5.2"_s};
    return c;
}

} // namespace

class TestRunConfig : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void defaultsMatchDesign();
    void minimalYamlGetsDefaults();
    void roundTrip_data();
    void roundTrip();
    void designExampleParses();
    void errorsNameFileAndLine_data();
    void errorsNameFileAndLine();
    void validConfigHasNoErrors();
    void missingFileNamesPath();
    void slackFor_data();
    void slackFor();
};

void TestRunConfig::defaultsMatchDesign()
{
    const RunConfig c;
    QCOMPARE(c.target, u"cpu"_s);
    QCOMPARE(c.search.beamWidth, 4);
    QCOMPARE(c.search.plansPerParent, 4);
    QCOMPARE(c.search.codePerPlan, 2);
    QCOMPARE(c.search.iterations, 8);
    QCOMPARE(c.search.menuDropout, 0.75);
    QCOMPARE(c.search.fixAttempts, 1);
    QCOMPARE(c.search.parentSlack, (QList<double>{1.1, 1.1, 1.0}));
    QCOMPARE(c.search.seed, quint64(1111));
    QCOMPARE(c.search.translateIters, 0);
    QCOMPARE(c.search.editMode, false);
    QVERIFY(!c.search.earlyStop);
    QCOMPARE(c.evaluation.executor, u"local"_s);
    QCOMPARE(c.evaluation.benchSlots, 1);
    QCOMPARE(c.evaluation.sandbox, u"auto"_s);
    QCOMPARE(c.evaluation.parallelCompiles, 0); // auto
    QCOMPARE(c.effectiveAgent(), u"cpu"_s);
}

void TestRunConfig::minimalYamlGetsDefaults()
{
    QStringList errors;
    const auto c = RunConfig::fromYaml("target: cpu\nproblem: gemm\nmodels: {plan: [\"vllm::qwen\"]}\n", FileName,
                                       &errors);
    QVERIFY2(c, qPrintable(errors.join(u'\n')));
    QVERIFY(errors.isEmpty());
    QCOMPARE(c->target, u"cpu"_s);
    QCOMPARE(c->problem, u"gemm"_s);
    QCOMPARE(c->planModels, QStringList{u"vllm::qwen"_s});
    QCOMPARE(c->effectiveCodeModels(), QStringList{u"vllm::qwen"_s});
    compareConfigs(*c, [] {
        RunConfig expected = minimalConfig();
        expected.planModels = {u"vllm::qwen"_s};
        return expected;
    }());
}

void TestRunConfig::roundTrip_data()
{
    QTest::addColumn<RunConfig>("config");

    QTest::newRow("minimal") << minimalConfig();

    RunConfig full = minimalConfig();
    full.target = u"cuda"_s;
    full.problem = u"level1/softmax"_s;
    full.agent = u"cuda-h100"_s;
    full.planModels = {u"openai::gpt-5.2"_s, u"anthropic::claude-opus-4-5"_s};
    full.codeModels = {u"vllm@http://gpu-box:8000/v1::qwen3-coder"_s};
    full.search.iterations = 12;
    full.search.beamWidth = 6;
    full.search.plansPerParent = 3;
    full.search.codePerPlan = 5;
    full.search.menuDropout = 0.5;
    full.search.newIdeaProbability = 0.25;
    full.search.fixAttempts = 3;
    full.search.parentSlack = {1.3, 1.05};
    full.search.seed = 987654321012ULL;
    full.search.translateIters = 2;
    full.search.translateThreshold = 7.5;
    full.search.editMode = true;
    full.search.earlyStop = 1.02;
    full.search.earlyStopPatience = 4;
    full.search.schedule = u"run-17"_s;
    full.budget.maxUsd = 12.5;
    full.budget.maxLlmCalls = 300;
    full.budget.maxHours = 1.5;
    full.evaluation.executor = u"slurm"_s;
    full.evaluation.parallelCompiles = 6;
    full.evaluation.benchSlots = 2;
    full.evaluation.sandbox = u"required"_s;
    full.evaluation.keepWorkdirs = true;
    full.evaluation.benchIsolation = u"exclusive"_s;
    full.evaluation.profile = true;
    full.evaluation.slurmPartition = u"gpu"_s;
    full.evaluation.slurmGres = u"gpu:1"_s;
    full.evaluation.slurmTime = u"00:30:00"_s;
    full.evaluation.slurmMem = u"8G"_s;
    full.evaluation.slurmSlots = 6;
    full.evaluation.slurmSharedDir = u"/scratch/autocomp"_s;
    full.evaluation.slurmPollMs = 500;
    full.evaluation.slurmBatch = 8;
    full.evaluation.slurmBatchWaitMs = 2500;
    full.evaluation.slurmCpus = 4;
    full.evaluation.remoteCommand = u"/opt/autocomp/bin/autocomp"_s;
    full.evaluation.remoteWorkdir = u"/scratch/tmp"_s;
    full.evaluation.remoteRetries = 3;
    full.evaluation.placement = {{u"cpu"_s, u"compile_local"_s}, {u"cuda"_s, u"remote"_s}};
    full.llm.maxAnswerBytes = 100000;
    full.llm.maxPromptBytes = 50000;
    full.llm.reuseAcrossRuns = true;
    QTest::newRow("every field set") << full;

    RunConfig ssh = minimalConfig();
    ssh.evaluation.executor = u"ssh"_s;
    ssh.evaluation.hosts = {autocomp::RemoteHost{u"trn1.example.org"_s, u"ubuntu"_s, 2222, 2},
                            autocomp::RemoteHost{u"10.0.0.7"_s, {}, 22, 1}};
    ssh.evaluation.sshKnownHosts = u"/home/me/.ssh/known_hosts"_s;
    ssh.evaluation.sshIdentity = u"/home/me/.ssh/id_ed25519"_s;
    ssh.evaluation.sshConnectTimeoutS = 5;
    ssh.evaluation.remoteWorkdir = u"/var/tmp"_s;
    QTest::newRow("ssh hosts") << ssh;

    RunConfig quoted = minimalConfig();
    quoted.problem = u"gemm: \"tricky\" # not a comment"_s;
    quoted.search.schedule = u"/home/me/schedules/best run.yaml"_s;
    quoted.evaluation.sandbox = u"off"_s;
    QTest::newRow("strings needing quotes") << quoted;
}

void TestRunConfig::roundTrip()
{
    QFETCH(RunConfig, config);
    const QByteArray yaml = config.toYaml();
    QStringList errors;
    const auto parsed = RunConfig::fromYaml(yaml, FileName, &errors);
    QVERIFY2(parsed, qPrintable(errors.join(u'\n') + u"\n--- yaml:\n"_s + QString::fromUtf8(yaml)));
    compareConfigs(*parsed, config);
    if (QTest::currentTestFailed())
        qWarning().noquote() << "YAML was:\n" << yaml;
    // Writing the parsed config again gives the same text: saving a loaded config does not drift.
    QCOMPARE(parsed->toYaml(), yaml);
}

void TestRunConfig::designExampleParses()
{
    // The example of DESIGN.md §8, verbatim.
    const QByteArray yaml = R"(target: cpu
problem: gemm
agent: cpu
models: {plan: ["openai::gpt-5.2", "anthropic::claude-opus-4-5"], code: null}
search: {iterations: 8, beam_width: 4, plans_per_parent: 4, code_per_plan: 2,
         menu_dropout: 0.75, fix_attempts: 1, parent_slack: [1.1, 1.1, 1.0], seed: 1111,
         translate_iters: 0, edit_mode: false, early_stop: null, schedule: null}
budget: {max_usd: 20, max_llm_calls: 2000, max_hours: 6}
evaluation: {executor: local, parallel_compiles: auto, bench_slots: 1, sandbox: auto}
)";
    QStringList errors;
    const auto c = RunConfig::fromYaml(yaml, FileName, &errors);
    QVERIFY2(c, qPrintable(errors.join(u'\n')));
    QCOMPARE(c->planModels, (QStringList{u"openai::gpt-5.2"_s, u"anthropic::claude-opus-4-5"_s}));
    QVERIFY(c->codeModels.isEmpty());
    QCOMPARE(c->effectiveCodeModels(), c->planModels);
    QCOMPARE(c->budget.maxUsd, std::optional<double>(20));
    QCOMPARE(c->budget.maxLlmCalls, std::optional<qint64>(2000));
    QCOMPARE(c->budget.maxHours, std::optional<double>(6));
    QCOMPARE(c->evaluation.parallelCompiles, 0);
    QVERIFY(!c->search.earlyStop);
    QVERIFY(c->search.schedule.isEmpty());
}

void TestRunConfig::errorsNameFileAndLine_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("mentions");

    const QByteArray head = "target: cpu\nproblem: gemm\nmodels: {plan: [\"openai::gpt-5.2\"]}\n";
    QTest::newRow("unknown top-level key") << QByteArray(head + "colour: red\n") << 4 << u"colour"_s;
    QTest::newRow("unknown nested key (typo)")
        << QByteArray(head + "search:\n  iterations: 3\n  beam_widht: 2\n") << 6 << u"search.beam_widht"_s;
    QTest::newRow("unknown key in budget")
        << QByteArray(head + "budget:\n  max_dollars: 3\n") << 5 << u"budget.max_dollars"_s;
    QTest::newRow("wrong type: iterations") << QByteArray(head + "search:\n  iterations: \"many\"\n") << 5 << u"many"_s;
    QTest::newRow("wrong type: edit_mode")
        << QByteArray(head + "search:\n  edit_mode: sometimes\n") << 5 << u"edit_mode"_s;
    QTest::newRow("wrong type: beam_width list")
        << QByteArray(head + "search:\n  beam_width: [1, 2]\n") << 5 << u"search.beam_width"_s;
    QTest::newRow("YAML syntax error") << QByteArray(head + "search: {iterations: 3\nbudget: {}\n") << 5 << u"syntax"_s;
    QTest::newRow("missing problem") << QByteArray("target: cpu\nmodels: {plan: [\"openai::gpt-5.2\"]}\n") << 1
                                     << u"problem"_s;
    // A configuration without a target is an error, not a silent cpu run.
    QTest::newRow("missing target") << QByteArray("problem: gemm\nmodels: {plan: [\"openai::gpt-5.2\"]}\n") << 1
                                    << u"'target'"_s;
    QTest::newRow("negative max_llm_calls")
        << QByteArray(head + "budget: {max_llm_calls: -1}\n") << 4 << u"budget.max_llm_calls"_s;
    QTest::newRow("negative max_hours") << QByteArray(head + "budget:\n  max_hours: -1\n") << 5
                                        << u"budget.max_hours"_s;
    QTest::newRow("unknown answer reuse")
        << QByteArray(head + "llm: {reuse_answers: always}\n") << 4 << u"llm.reuse_answers"_s;
    QTest::newRow("tiny answer limit") << QByteArray(head + "llm:\n  max_answer_bytes: 10\n") << 5
                                       << u"llm.max_answer_bytes"_s;
    QTest::newRow("dropout above 1") << QByteArray(head + "search:\n  iterations: 3\n  menu_dropout: 1.5\n") << 6
                                     << u"menu_dropout"_s;
    QTest::newRow("dropout negative") << QByteArray(head + "search: {menu_dropout: -0.1}\n") << 4 << u"menu_dropout"_s;
    QTest::newRow("sandbox invalid") << QByteArray(head + "evaluation:\n  sandbox: maybe\n") << 5 << u"maybe"_s;
    QTest::newRow("executor invalid") << QByteArray(head + "evaluation:\n  executor: kubernetes\n") << 5
                                      << u"kubernetes"_s;
    QTest::newRow("ssh without hosts") << QByteArray(head + "evaluation:\n  executor: ssh\n") << 5
                                       << u"evaluation.hosts"_s;
    QTest::newRow("host not user@host:port")
        << QByteArray(head + "evaluation:\n  executor: ssh\n  hosts: [\"me@@box\"]\n") << 6 << u"me@@box"_s;
    QTest::newRow("host port out of range")
        << QByteArray(head + "evaluation:\n  executor: ssh\n  hosts:\n    - {host: box, port: 70000}\n") << 7
        << u"hosts[].port"_s;
    QTest::newRow("placement invalid") << QByteArray(head
                                                     + "evaluation:\n  executor: slurm\n  placement: {cpu: sideways}\n")
                                       << 6 << u"sideways"_s;
    QTest::newRow("relative remote workdir")
        << QByteArray(head + "evaluation:\n  executor: ssh\n  hosts: [box]\n  remote: {workdir: tmp}\n") << 7
        << u"remote.workdir"_s;
    QTest::newRow("gres with a space") << QByteArray(head
                                                     + "evaluation:\n  executor: slurm\n  slurm: {gres: \"gpu 1\"}\n")
                                       << 6 << u"slurm.gres"_s;
    QTest::newRow("slurm batch of none") << QByteArray(head + "evaluation:\n  executor: slurm\n  slurm: {batch: 0}\n")
                                         << 6 << u"'evaluation.slurm.batch'"_s;
    QTest::newRow("slurm cpus of none") << QByteArray(head + "evaluation:\n  executor: slurm\n  slurm:\n    cpus: 0\n")
                                        << 7 << u"'evaluation.slurm.cpus'"_s;
    QTest::newRow("slurm batch wait negative")
        << QByteArray(head + "evaluation:\n  executor: slurm\n  slurm: {batch: 4, batch_wait_ms: -1}\n") << 6
        << u"batch_wait_ms"_s;
    QTest::newRow("unknown ssh key") << QByteArray(head + "evaluation:\n  ssh: {password: hunter2}\n") << 5
                                     << u"password"_s;
    QTest::newRow("bench isolation invalid")
        << QByteArray(head + "evaluation:\n  bench_slots: 1\n  bench_isolation: loose\n") << 6 << u"bench_isolation"_s;
}

void TestRunConfig::errorsNameFileAndLine()
{
    QFETCH(QByteArray, yaml);
    QFETCH(int, line);
    QFETCH(QString, mentions);

    QStringList errors;
    const auto config = RunConfig::fromYaml(yaml, FileName, &errors);
    QVERIFY(!config);
    QVERIFY(!errors.isEmpty());
    const QString expectedPrefix = FileName + u':' + QString::number(line);
    bool found = false;
    for (const QString &error : std::as_const(errors)) {
        if (error.startsWith(expectedPrefix) && !error.at(expectedPrefix.size()).isDigit() && error.contains(mentions))
            found = true;
    }
    QVERIFY2(
        found,
        qPrintable(u"expected an error starting with '%1' and mentioning '%2', got:\n"_s.arg(expectedPrefix, mentions)
                   + errors.join(u'\n')));
}

void TestRunConfig::validConfigHasNoErrors()
{
    QStringList errors{u"left over"_s};
    QVERIFY(RunConfig::fromYaml(minimalConfig().toYaml(), FileName, &errors));
    QCOMPARE(errors, QStringList{u"left over"_s}); // appends only on failure
    QVERIFY(minimalConfig().validate().isEmpty());
}

void TestRunConfig::missingFileNamesPath()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(u"nope.yaml"_s);
    QStringList errors;
    QVERIFY(!RunConfig::fromFile(path, &errors));
    QCOMPARE(errors.size(), 1);
    QVERIFY2(errors.first().contains(path), qPrintable(errors.first()));
}

void TestRunConfig::slackFor_data()
{
    QTest::addColumn<QByteArray>("slackYaml");
    QTest::addColumn<int>("iteration");
    QTest::addColumn<double>("expected");

    QTest::newRow("default, iteration 1") << QByteArray() << 1 << 1.1;
    QTest::newRow("default, iteration 2") << QByteArray() << 2 << 1.1;
    QTest::newRow("default, iteration 3") << QByteArray() << 3 << 1.0;
    QTest::newRow("default, iteration 8 repeats last") << QByteArray() << 8 << 1.0;
    QTest::newRow("list, iteration 2") << QByteArray("[1.5, 1.25, 1.05]") << 2 << 1.25;
    QTest::newRow("list, iteration 40 repeats last") << QByteArray("[1.5, 1.25, 1.05]") << 40 << 1.05;
    QTest::newRow("single value repeats") << QByteArray("1.2") << 6 << 1.2;
    QTest::newRow("one-element list repeats") << QByteArray("[1.3]") << 3 << 1.3;
}

void TestRunConfig::slackFor()
{
    QFETCH(QByteArray, slackYaml);
    QFETCH(int, iteration);
    QFETCH(double, expected);

    QByteArray yaml = "target: cpu\nproblem: gemm\nmodels: {plan: [\"openai::gpt-5.2\"]}\n";
    if (!slackYaml.isEmpty())
        yaml += "search: {parent_slack: " + slackYaml + "}\n";
    QStringList errors;
    const auto c = RunConfig::fromYaml(yaml, FileName, &errors);
    QVERIFY2(c, qPrintable(errors.join(u'\n')));
    QCOMPARE(c->search.slackFor(iteration), expected);
}

QTEST_GUILESS_MAIN(TestRunConfig)
#include "tst_run_config.moc"
