// What a target author declares in backend.yaml and problem.yaml reaches the user: available_if
// (absent targets are named with what they lack and a run refuses to start), unit and measurement
// (in the prompt), settings (placeholders, prompt, environment override), shapes in the file's order,
// and every key and placeholder the loader accepts is documented in backends/README.md.
#include "agents/prompt_builder.h"
#include "eval/evaluator.h"
#include "catalog/repository.h"
#include "search/run_setup.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QUuid>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace autocomp;

namespace {

bool writeFile(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(content) == content.size();
}

// A data directory with one target `t` (backend.yaml as given), one problem and one agent.
bool writeDataDir(const QString &dir, const QByteArray &backendYaml)
{
    return writeFile(dir + u"/backends/t/backend.yaml"_s, backendYaml)
        && writeFile(dir + u"/sols/t/p/problem.yaml"_s,
                     "name: p\nstart: p_start.cpp\nreference: p_ref.cpp\nshapes: [{rows: 3, cols: 7, K: 2}, {rows: 5, "
                     "cols: 1, K: 9}]\n"
                     "bench_shape: 1\n")
        && writeFile(dir + u"/sols/t/p/p_start.cpp"_s, "void p() {}\n")
        && writeFile(dir + u"/sols/t/p/p_ref.cpp"_s, "void p() {}\n")
        && writeFile(dir + u"/agents/t/agent_config.yaml"_s, "name: t\ntarget: t\n")
        && writeFile(dir + u"/agents/t/optimization_menu.yaml"_s, "optimizations:\n  - strategy: \"unroll\"\n");
}

const QByteArray s_steps = "steps:\n  - {name: run, run: [echo, \"{vlen}\", \"{bench_shape}\"]}\n";

} // namespace

class TestTargetConfig : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void absentTargetNamesWhatItLacksAndRefusesToRun()
    {
        QTemporaryDir dir;
        QVERIFY(writeDataDir(
            dir.path(), "requires: \"a simulator\"\navailable_if: [sh, autocomp-no-such-simulator-42]\n" + s_steps));
        const Repository repo({dir.path()});
        QString error;
        const auto target = repo.target(u"t"_s, &error);
        QVERIFY2(target, qPrintable(error));
        QCOMPARE(target->availableIf, (QStringList{u"sh"_s, u"autocomp-no-such-simulator-42"_s}));
        QCOMPARE(target->missingPrograms(), QStringList{u"autocomp-no-such-simulator-42"_s});
        QVERIFY(!target->available());
        QVERIFY(target->absenceReason().contains(u"autocomp-no-such-simulator-42"_s));
        QVERIFY(target->absenceReason().contains(u"a simulator"_s));

        RunConfig config;
        config.target = u"t"_s;
        config.problem = u"p"_s;
        config.planModels = {u"vllm::m"_s};
        QStringList errors;
        QVERIFY(!prepareRun(config, {}, repo, dir.filePath(u"s.sqlite"_s), &errors));
        QVERIFY2(errors.join(u'\n').contains(u"absent on this machine"_s)
                     && errors.join(u'\n').contains(u"autocomp-no-such-simulator-42"_s),
                 qPrintable(errors.join(u'\n')));

        // A single program is accepted too, and a present one makes the target available.
        QVERIFY(writeFile(dir.path() + u"/backends/t/backend.yaml"_s, "available_if: sh\n" + s_steps));
        const auto present = repo.target(u"t"_s, &error);
        QVERIFY2(present, qPrintable(error));
        QVERIFY(present->available());
        QVERIFY(present->absenceReason().isEmpty());
        errors.clear();
        QVERIFY2(prepareRun(config, {}, repo, dir.filePath(u"s.sqlite"_s), &errors), qPrintable(errors.join(u'\n')));
    }

    void settingsExpandEverywhereAndTheEnvironmentOverrides()
    {
        QTemporaryDir dir;
        QVERIFY(writeDataDir(dir.path(),
                             "metric: instructions\nunit: instructions\nsettings: {vlen: 256}\n"
                             "measurement: \"Counted under an emulator with VLEN={vlen} bits.\"\n"
                                 + s_steps));
        const Repository repo({dir.path()});
        QString error;
        auto target = repo.target(u"t"_s, &error);
        QVERIFY2(target, qPrintable(error));
        const auto problem = repo.problem(u"t"_s, u"p"_s, &error);
        QVERIFY2(problem, qPrintable(error));
        QCOMPARE(target->measurement, u"Counted under an emulator with VLEN=256 bits."_s);
        // The bench shape keeps problem.yaml's key order (rows, cols, K), not the sorted one.
        QCOMPARE(Evaluator::expandArgs(target->steps.first().run, *target, *problem, {}),
                 (QStringList{u"echo"_s, u"256"_s, u"rows=5,cols=1,K=9"_s}));
        QCOMPARE(problem->shapesArgument(), u"rows=3,cols=7,K=2;rows=5,cols=1,K=9"_s);
        // A run of it shows the target's unit, also one stored before runs kept their unit.
        RunInfo run;
        run.target = u"t"_s;
        run.metric = target->metric;
        QCOMPARE(repo.metricUnitOf(run), u"instructions"_s);

        QCOMPARE(Target::settingVariable(u"t"_s, u"vlen"_s), u"AUTOCOMP_T_VLEN"_s);
        qputenv("AUTOCOMP_T_VLEN", "512");
        target = repo.target(u"t"_s, &error);
        qunsetenv("AUTOCOMP_T_VLEN");
        QVERIFY2(target, qPrintable(error));
        QCOMPARE(Evaluator::expandArgs(target->steps.first().run, *target, *problem, {}).at(1), u"512"_s);
        QCOMPARE(target->measurement, u"Counted under an emulator with VLEN=512 bits."_s);

        // A value that is not a plain word never reaches an argument list.
        qputenv("AUTOCOMP_T_VLEN", "256; rm -rf x");
        QVERIFY(!repo.target(u"t"_s, &error));
        qunsetenv("AUTOCOMP_T_VLEN");
        QVERIFY2(error.contains(u"backend.yaml"_s) && error.contains(u"settings.vlen"_s)
                     && error.contains(u"AUTOCOMP_T_VLEN"_s),
                 qPrintable(error));
    }

    void badSettingsNameTheFileAndKey_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not a mapping") << QByteArray("settings: [256]\n") << u"'settings' must be a mapping"_s;
        QTest::newRow("shadows a placeholder") << QByteArray("settings: {workdir: x}\n") << u"settings: 'workdir'"_s;
        QTest::newRow("upper case") << QByteArray("settings: {VLEN: 256}\n") << u"settings: 'VLEN'"_s;
        QTest::newRow("not a plain word") << QByteArray("settings: {vlen: \"a b\"}\n") << u"settings.vlen"_s;
        QTest::newRow("available_if with arguments")
            << QByteArray("available_if: \"qemu-riscv64 --version\"\n") << u"available_if"_s;
    }

    void badSettingsNameTheFileAndKey()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        QVERIFY(writeDataDir(dir.path(), yaml + s_steps));
        QString error;
        QVERIFY(!Repository({dir.path()}).target(u"t"_s, &error));
        QVERIFY2(error.contains(u"backend.yaml"_s) && error.contains(expected), qPrintable(error));
    }

    // `accelerator: true` (or its first name `gpu`) marks the steps that reach the device; a value that is not
    // a boolean is an error naming the step's key.
    void acceleratorStepsAreMarked()
    {
        QTemporaryDir dir;
        QVERIFY(
            writeDataDir(dir.path(),
                         "steps:\n  - {name: build, run: [echo]}\n  - {name: check, run: [echo], accelerator: true}\n"
                         "  - {name: time, run: [echo], gpu: true}\n"));
        QString error;
        const auto target = Repository({dir.path()}).target(u"t"_s, &error);
        QVERIFY2(target, qPrintable(error));
        QCOMPARE(target->steps.size(), 3);
        QVERIFY(!target->steps.at(0).gpu);
        QVERIFY(target->steps.at(1).gpu);
        QVERIFY(target->steps.at(2).gpu);
        QVERIFY(writeDataDir(dir.path(), "steps:\n  - {name: check, run: [echo], accelerator: maybe}\n"));
        QVERIFY(!Repository({dir.path()}).target(u"t"_s, &error));
        QVERIFY2(error.contains(u"backend.yaml"_s) && error.contains(u"accelerator"_s), qPrintable(error));
    }

    // The plan prompt says how the target measures and gives the primary metric the declared unit.
    void promptCarriesMeasurementUnitAndSettings()
    {
        Target target;
        target.name = u"t"_s;
        target.metric = u"instructions"_s;
        target.metricUnit = u"instr"_s;
        target.measurement = u"Counted by a TCG plugin."_s;
        target.settings = {{u"vlen"_s, u"128"_s}};
        Problem problem;
        problem.name = u"p"_s;
        problem.shapes = {QVariantMap{{u"n"_s, 7}}, QVariantMap{{u"n"_s, 9}}};
        problem.shapeKeys = {u"n"_s};
        problem.benchShape = 1;
        Agent agent;
        agent.architecture = u"a machine"_s;
        Candidate parent;
        parent.code = u"int x;"_s;
        parent.metrics = QJsonObject{{u"instructions"_s, 1234.0}, {u"vector_instructions"_s, 10.0}};
        PlanPromptInput in;
        in.agent = &agent;
        in.problem = &problem;
        in.target = &target;
        in.parent = &parent;
        in.menu = {{1, u"unroll"_s}};
        const QString prompt = PromptBuilder::planPrompt(in);
        QVERIFY2(prompt.contains(u"Counted by a TCG plugin."_s), qPrintable(prompt));
        QVERIFY2(prompt.contains(u"instructions: 1234 instr"_s), qPrintable(prompt));
        QVERIFY(prompt.contains(u"Target settings: vlen=128."_s));
        QVERIFY(prompt.contains(u"Shapes checked: `n=7`, `n=9`; measured at `n=9`."_s));
        QVERIFY(!prompt.contains(u"Measured on the target hardware"_s));

        target.measurement.clear();
        QVERIFY(PromptBuilder::planPrompt(in).contains(u"Measured on the target hardware: instructions: 1234 instr"_s));
    }

    // available_check: a command decides whether the target is usable here, and says why not.
    void availableCheckMakesATargetAbsentWithItsReason()
    {
        QTemporaryDir dir;
        QVERIFY(writeDataDir(
            dir.path(),
            "available_check: [sh, -c, \"echo probing; echo 'no widget accelerator on this host'; exit 1\"]\n"
                + s_steps));
        const Repository repo({dir.path()});
        QString error;
        const auto target = repo.target(u"t"_s, &error);
        QVERIFY2(target, qPrintable(error));
        QVERIFY(!target->available());
        QVERIFY2(target->absenceReason().endsWith(u"absent on this machine: no widget accelerator on this host"_s),
                 qPrintable(target->absenceReason()));
        QVERIFY(
            writeFile(dir.path() + u"/backends/t/backend.yaml"_s, "available_check: [sh, -c, \"exit 0\"]\n" + s_steps));
        const auto present = repo.target(u"t"_s, &error);
        QVERIFY2(present && present->available(), qPrintable(error));
        // A check that is not an argument list is an error naming the key.
        QVERIFY(writeFile(dir.path() + u"/backends/t/backend.yaml"_s, "hardware_check: []\n" + s_steps));
        QVERIFY(!repo.target(u"t"_s, &error));
        QVERIFY2(error.contains(u"backend.yaml:1"_s) && error.contains(u"hardware_check"_s), qPrintable(error));
    }

    // hardware_check and needs_hardware: without the hardware (or with compile_only) the steps before
    // run, the judge's static report is kept, and the evaluation ends with no_hardware; a run refuses to
    // start without compile_only. reuse: a step's output is kept by key and not built twice.
    void noHardwareStopsAfterCompilingAndReuseSkipsTheBuild()
    {
        QTemporaryDir dir;
        // The cache is the user's (Evaluator::cacheDir): code this process alone evaluates.
        const QString one = u"kernel one "_s + QUuid::createUuid().toString(),
                      two = u"kernel two "_s + QUuid::createUuid().toString();
        const QByteArray steps =
            "steps:\n"
            "  - {name: build, run: [sh, -c, \"mkdir -p {workdir}/out && echo built-$$ > {workdir}/out/stamp\"], "
            "fail_status: compile_error,\n"
            "     reuse: {key: \"{candidate_hash}\", output: \"{workdir}/out\"}}\n"
            "  - {name: report, role: judge, run: [sh, -c, \"test -s {workdir}/out/stamp && echo '{\\\"status\\\": "
            "\\\"ok\\\", "
            "\\\"correct\\\": false, \\\"feedback\\\": [\\\"registers: 40\\\"]}' > {judgedir}/result.json\"]}\n"
            "  - {name: run, role: judge, needs_hardware: true, run: [sh, -c, \"echo '{\\\"status\\\": \\\"ok\\\", "
            "\\\"correct\\\": true, "
            "\\\"metrics\\\": {\\\"latency_ms\\\": 2}}' > {judgedir}/result.json\"]}\n";
        QVERIFY(writeDataDir(dir.path(), "hardware_check: [sh, -c, \"echo 'no widget card'; exit 1\"]\n" + steps));
        const Repository repo({dir.path()});
        QString error;
        const auto target = repo.target(u"t"_s, &error);
        QVERIFY2(target, qPrintable(error));
        const auto problem = repo.problem(u"t"_s, u"p"_s, &error);
        QVERIFY2(problem, qPrintable(error));
        QVERIFY(target->available());
        QCOMPARE(target->hardwareAbsence(), u"no widget card"_s);
        QVERIFY(target->steps.at(2).needsHardware);

        RunConfig config;
        config.target = u"t"_s;
        config.problem = u"p"_s;
        config.planModels = {u"vllm::m"_s};
        QStringList errors;
        QVERIFY(!prepareRun(config, {}, repo, dir.filePath(u"s.sqlite"_s), &errors));
        QVERIFY2(errors.join(u'\n').contains(u"no hardware"_s) && errors.join(u'\n').contains(u"compile_only"_s),
                 qPrintable(errors.join(u'\n')));
        config.evaluation.compileOnly = true;
        errors.clear();
        QVERIFY2(prepareRun(config, {}, repo, dir.filePath(u"s.sqlite"_s), &errors), qPrintable(errors.join(u'\n')));

        Evaluator evaluator(EvaluationConfig{});
        auto evaluate = [&](const QString &code, const EvaluationConfig *options) {
            EvalResult result;
            EvalJob *job = evaluator.evaluate(*target, *problem, code, QString(), options);
            QSignalSpy done(job, &EvalJob::finished);
            if (!done.wait(60000))
                return result;
            return done.first().first().value<EvalResult>();
        };
        const EvalResult first = evaluate(one, nullptr);
        QCOMPARE(first.status, u"no_hardware"_s);
        QVERIFY(!first.correct);
        QVERIFY2(first.feedback.contains(u"registers: 40"_s), qPrintable(first.feedback.join(u'|')));
        QVERIFY2(first.feedback.join(u'|').contains(u"no widget card"_s), qPrintable(first.feedback.join(u'|')));
        QCOMPARE(first.steps.size(), 2); // build, report: never the run step
        QVERIFY(!first.steps.at(0).log.contains(u"reused"_s));

        // The same code again: its build output comes from the cache; different code is built.
        const EvalResult again = evaluate(one, nullptr);
        QCOMPARE(again.status, u"no_hardware"_s);
        QVERIFY2(again.steps.at(0).log.contains(u"reused the output"_s), qPrintable(again.steps.at(0).log));
        const EvalResult other = evaluate(two, nullptr);
        QVERIFY(!other.steps.at(0).log.contains(u"reused"_s));

        // With the hardware present, the run step decides; compile_only still leaves it out.
        QVERIFY(
            writeFile(dir.path() + u"/backends/t/backend.yaml"_s, "hardware_check: [sh, -c, \"exit 0\"]\n" + steps));
        const auto withHardware = repo.target(u"t"_s, &error);
        QVERIFY2(withHardware, qPrintable(error));
        EvalJob *job = evaluator.evaluate(*withHardware, *problem, one, QString());
        QSignalSpy done(job, &EvalJob::finished);
        QVERIFY(done.wait(60000));
        const EvalResult ran = done.first().first().value<EvalResult>();
        QVERIFY2(ran.correct && ran.status == u"ok"_s, qPrintable(ran.log));
        QCOMPARE(ran.metricValue(u"latency_ms"_s), 2.0);
        EvaluationConfig compileOnly;
        compileOnly.compileOnly = true;
        job = evaluator.evaluate(*withHardware, *problem, one, QString(), &compileOnly);
        QSignalSpy done2(job, &EvalJob::finished);
        QVERIFY(done2.wait(60000));
        const EvalResult compiled = done2.first().first().value<EvalResult>();
        QCOMPARE(compiled.status, u"no_hardware"_s);
        QVERIFY(compiled.feedback.join(u'|').contains(u"compile_only"_s));
    }

    // backends/README.md, the reference for target authors, documents every key the loader accepts
    // and every placeholder a step may use.
    void everyKeyAndPlaceholderIsDocumented()
    {
        QFile file(qEnvironmentVariable("AUTOCOMP_DATA_DIR") + u"/backends/README.md"_s);
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
        const QString doc = QString::fromUtf8(file.readAll());
        auto documentedInTable = [&](const QString &key) {
            // A table row that starts with the key in backquotes.
            return QRegularExpression(u"\\n\\| `"_s + QRegularExpression::escape(key) + u"` \\|"_s)
                .match(doc)
                .hasMatch();
        };
        QStringList missing;
        for (const QStringList &keys : {Repository::backendKeys(), Repository::stepKeys(), Repository::setupStepKeys(),
                                        Repository::problemKeys()})
            for (const QString &key : keys)
                if (!documentedInTable(key))
                    missing << key;
        for (const QString &name : Evaluator::placeholderNames())
            if (!documentedInTable(u'{' + name + u'}'))
                missing << u'{' + name + u'}';
        missing.removeDuplicates();
        QVERIFY2(missing.isEmpty(), qPrintable(u"undocumented in backends/README.md: "_s + missing.join(u", "_s)));
        QVERIFY(doc.contains(u"AUTOCOMP_DATA_DIR"_s));
        for (const char *section : {"## Placeholders", "### What a failing step means", "### Kinds of step",
                                    "## result.json", "## A worked example"})
            QVERIFY2(doc.contains(QLatin1String(section)), section);
    }

    // The list the documentation test checks is the expander's: each built-in placeholder that does
    // not come from an evaluation or a judged step is replaced.
    void placeholderListMatchesTheExpander()
    {
        Target target;
        target.name = u"t"_s;
        target.dir = u"/b"_s;
        Problem problem;
        problem.name = u"p"_s;
        problem.dir = u"/p"_s;
        problem.shapes = {QVariantMap{{u"n"_s, 1}}};
        problem.shapeKeys = {u"n"_s};
        const QStringList perEvaluation{u"candidate"_s, u"workdir"_s,  u"judgedir"_s,    u"baseline"_s,
                                        u"seed"_s,      u"channels"_s, u"worker_pids"_s, u"candidate_hash"_s};
        for (const QString &name : Evaluator::placeholderNames()) {
            if (perEvaluation.contains(name) || name == u"libraries"_s)
                continue;
            const QString arg = name == u"env:NAME"_s ? u"{env:HOME}"_s : u'{' + name + u'}';
            QVERIFY2(Evaluator::expand(arg, target, problem, {}) != arg, qPrintable(name));
        }
        // {libraries} is a whole argument: dropped when the problem allows none.
        QCOMPARE(Evaluator::expandArgs({u"{libraries}"_s}, target, problem, {}), QStringList{});
    }
};

QTEST_GUILESS_MAIN(TestTargetConfig)
#include "tst_target_config.moc"
