// The trainium (NKI) and gemmini target packs: data only (agents, backend.yaml, trusted tools,
// problems). Their vendor tools (neuronx-cc, neuron-profile and a NeuronCore; spike with Gemmini's
// functional model and the bare-metal RISC-V toolchain; FireSim) are not on the machines that run
// the tests, so:
//
//   - without them both targets are listed absent with what they need, and `autocomp eval` refuses
//     them (exit 1, the absence reason), never simulating the hardware;
//   - their backend.yaml files load (an unknown key is an error), every placeholder they use is one
//     the evaluator expands, their problems load, and their agents load and build prompts carrying
//     the ISA's `##`/`###` sections, the measurement and the unit;
//   - the parts of their pipelines that need no vendor tool run for real: the NKI static check, the
//     gemmini lint, the paste of a candidate between the harness's SUBSTITUTE markers, every gemmini
//     harness built for the host and run, and the gemmini judge deciding a spike log against its own
//     host run of the same harness;
//   - the parsers of the vendor tools' output (neuron-profile's summary-json, nki.benchmark's
//     `Latency: X ms (P99)`, the harness's lines under spike, FireSim's uartlog) on fixtures in those
//     exact formats, malformed ones included (the error names the line and the field).
//
// The gemmini score is named for what the simulator counts: `instructions` on spike (its cycle counter
// counts retired instructions), `cycles` on FireSim, decided on recorded outputs (data/gemmini_metrics).
//
// With Debian's bare-metal toolchain (gcc-riscv64-unknown-elf, picolibc-riscv64-unknown-elf) and a
// gemmini-rocc-tests checkout with its submodules (AUTOCOMP_GEMMINI_ROCC_TESTS, or the target's default
// path), `autocomp eval` runs every gemmini problem's start code through the real steps in the sandbox:
// the compile step builds the bare-metal harness, and a stand-in `spike` outside /usr, named by the
// setting, runs in place of the simulator.
#include "agents/isa_filter.h"
#include "agents/prompt_builder.h"
#include "eval/evaluator.h"
#include "model/candidate.h"
#include "catalog/repository.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;
using namespace Qt::StringLiterals;

class TestAccelPacks : public QObject
{
    Q_OBJECT

private:
    struct Outcome
    {
        int exitCode = -1;
        QByteArray out;
        QByteArray err;
    };

    static Outcome run(const QString &program, const QStringList &args,
                       const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
    {
        QProcess process;
        process.setProcessEnvironment(env);
        process.start(program, args);
        Outcome o;
        if (!process.waitForFinished(180000)) {
            process.kill();
            process.waitForFinished();
            return o;
        }
        o.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
        o.out = process.readAllStandardOutput();
        o.err = process.readAllStandardError();
        return o;
    }

    static QByteArray describe(const Outcome &o)
    {
        return "exit " + QByteArray::number(o.exitCode) + "\nstdout:\n" + o.out.left(4000) + "\nstderr:\n"
            + o.err.right(3000);
    }

    static QString shipped() { return qEnvironmentVariable("AUTOCOMP_DATA_DIR"); }
    static QString tool(const QString &target, const QString &name)
    {
        return shipped() + u"/backends/"_s + target + u"/tools/"_s + name;
    }
    static QString fixture(const QString &name)
    {
        return qEnvironmentVariable("AUTOCOMP_TEST_DATA") + u"/integration/data/accel/"_s + name;
    }
    static QString metricsFixture(const QString &name)
    {
        return qEnvironmentVariable("AUTOCOMP_TEST_DATA") + u"/integration/data/gemmini_metrics/"_s + name;
    }

    static QByteArray readAll(const QString &path)
    {
        QFile file(path);
        return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    }

    bool writeFile(const QString &path, const QByteArray &text)
    {
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile file(path);
        return file.open(QIODevice::WriteOnly) && file.write(text) == text.size();
    }

    // A PATH holding only links to the named programs (those this machine has).
    QString pathWith(const QString &name, const QStringList &programs)
    {
        const QString dir = m_dir.filePath(name);
        QDir().mkpath(dir);
        for (const QString &program : programs) {
            const QString found = QStandardPaths::findExecutable(program);
            if (!found.isEmpty())
                QFile::link(found, dir + u'/' + program);
        }
        return dir;
    }

    // The problem's benchmark shape as the evaluator passes it ({bench_shape}).
    static QString benchShape(const QString &target, const QString &problem)
    {
        QString error;
        const auto p = Repository(QStringList{shipped()}).problem(target, problem, &error);
        return p ? p->shapeArgument(p->benchShape) : QString();
    }

    // Builds a gemmini harness for the host (no candidate) as the judge does, runs it, returns its output.
    Outcome hostHarness(const QString &problem, const QString &key)
    {
        const QString build = m_dir.filePath(u"host-"_s + problem + u'-' + key);
        const QString harness = shipped() + u"/sols/gemmini/"_s + problem + u"/harness.c"_s;
        Outcome paste = run(u"python3"_s,
                            {tool(u"gemmini"_s, u"gemmini_paste.py"_s), u"--harness"_s, harness, u"--shape"_s,
                             benchShape(u"gemmini"_s, problem), u"--key"_s, key, u"--out-dir"_s, build});
        if (paste.exitCode != 0)
            return paste;
        Outcome cc = run(u"cc"_s,
                         {u"-O1"_s, u"-std=gnu99"_s, u"-Wall"_s, u"-Werror"_s, u"-DAUTOCOMP_GEMMINI_HOST"_s,
                          u"-I"_s + build, u"-I"_s + shipped() + u"/backends/gemmini/include"_s,
                          u"-I"_s + shipped() + u"/sols/gemmini/"_s + problem, u"-o"_s, build + u"/host"_s, harness});
        if (cc.exitCode != 0)
            return cc;
        return run(build + u"/host"_s, {});
    }

    // What the harness prints under spike for a run whose outputs are correct: the host build's lines
    // (same key, so the same header and checksums) with a measurement before each checksum, in the
    // harness's own format (autocomp_gemmini_io.h). No simulator ran; this drives the judge's decision.
    static QByteArray asSpikeLog(const QByteArray &host, const QList<int> &cycles)
    {
        QByteArray out = "warning: tohost and fromhost symbols not in ELF; can't communicate with target\n";
        int repeat = 0;
        for (const QByteArray &line : host.split('\n')) {
            if (line.startsWith("repeat ")) {
                const QByteArray n = QByteArray::number(cycles.value(repeat++, 1000));
                out += "Generated implementation latency: " + n + " cycles\nGenerated implementation instructions: " + n
                    + "\n";
            }
            if (!line.isEmpty())
                out += line + '\n';
        }
        return out;
    }

    Outcome judgeReport(const QString &problem, const QString &key, const QString &spikeLog,
                        const QStringList &extra = {})
    {
        const QString judgedir = m_dir.filePath(u"judge-"_s + QFileInfo(spikeLog).baseName());
        QDir().mkpath(judgedir);
        return run(u"python3"_s,
                   QStringList{tool(u"gemmini"_s, u"gemmini_judge.py"_s),
                               u"report"_s,
                               u"--harness"_s,
                               shipped() + u"/sols/gemmini/"_s + problem + u"/harness.c"_s,
                               u"--problem-dir"_s,
                               shipped() + u"/sols/gemmini/"_s + problem,
                               u"--include"_s,
                               shipped() + u"/backends/gemmini/include"_s,
                               u"--shape"_s,
                               benchShape(u"gemmini"_s, problem),
                               u"--key"_s,
                               key,
                               u"--cc"_s,
                               u"cc"_s,
                               u"--spike-log"_s,
                               spikeLog,
                               u"--firesim-log"_s,
                               judgedir + u"/uartlog"_s,
                               u"--build-dir"_s,
                               judgedir + u"/host"_s,
                               u"--result"_s,
                               judgedir + u"/result.json"_s}
                       + extra);
    }

    QJsonObject lastResult(const QString &spikeLog)
    {
        return QJsonDocument::fromJson(
                   readAll(m_dir.filePath(u"judge-"_s + QFileInfo(spikeLog).baseName() + u"/result.json"_s)))
            .object();
    }

    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const QString cli = qEnvironmentVariable("AUTOCOMP_CLI");
        QVERIFY2(!cli.isEmpty() && QFileInfo(cli).isExecutable(), "AUTOCOMP_CLI must name the built autocomp binary");
        QVERIFY2(!QStandardPaths::findExecutable(u"python3"_s).isEmpty(),
                 "the packs' trusted tools are Python 3 scripts");
        QVERIFY2(!QStandardPaths::findExecutable(u"cc"_s).isEmpty(),
                 "the gemmini judge builds its host harness with cc");
    }

    // Without the vendor tools (a PATH without them) each target is listed absent, naming what is
    // missing and what it needs, and an evaluation is refused with that reason.
    void absentTargetsAreListedAndRefused_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("missing");
        QTest::addColumn<QString>("needs");
        QTest::newRow("trainium") << u"trainium"_s << u"matmul"_s << u"sols/trainium/matmul/start.py"_s
                                  << u"neuronx-cc, neuron-profile"_s << u"Neuron SDK"_s;
    }

    void absentTargetsAreListedAndRefused()
    {
        QFETCH(QString, target);
        QFETCH(QString, problem);
        QFETCH(QString, code);
        QFETCH(QString, missing);
        QFETCH(QString, needs);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"PATH"_s, pathWith(u"base-path"_s, {u"python3"_s, u"cc"_s}));
        const Outcome targets = run(qEnvironmentVariable("AUTOCOMP_CLI"), {u"targets"_s}, env);
        const QString listing = QString::fromUtf8(targets.out);
        const QRegularExpression entry(u"(^|\\n)"_s + target
                                       + u"  absent .*\\n    missing: ([^\\n]*)\\n    needs: ([^\\n]*)"_s);
        const auto m = entry.match(listing);
        QVERIFY2(m.hasMatch(), qPrintable(listing));
        QVERIFY2(m.captured(2).contains(missing), qPrintable(m.captured(2)));
        QVERIFY2(m.captured(3).contains(needs), qPrintable(m.captured(3)));

        const Outcome eval = run(
            qEnvironmentVariable("AUTOCOMP_CLI"),
            {u"eval"_s, u"--target"_s, target, u"--problem"_s, problem, u"--code"_s, shipped() + u'/' + code}, env);
        QCOMPARE(eval.exitCode, 1);
        QVERIFY2(eval.err.contains(QByteArray("target '" + target.toUtf8() + "' is absent on this machine: "
                                              + missing.toUtf8() + " not found on PATH")),
                 describe(eval).constData());
        QVERIFY2(eval.out.isEmpty(), describe(eval).constData()); // no result: nothing ran
    }

    // With the programs on PATH but the rest of the installation missing, the target's own probe
    // (available_check) keeps it absent and says what is missing. The names on PATH are links to
    // `false`: the probes only look for them and never run them.
    void probesNameWhatIsMissing_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QStringList>("standIns");
        QTest::addColumn<QString>("reason");
        QTest::newRow("gemmini: no RISC-V compiler")
            << u"gemmini"_s << QStringList{u"spike"_s}
            << u"the RISC-V compiler 'autocomp-no-such-riscv-gcc' is not on PATH (setting toolchain)"_s;
        // spike is a setting (a name on PATH, or a path: AUTOCOMP_GEMMINI_SPIKE), checked by the probe.
        QTest::newRow("gemmini: no spike")
            << u"gemmini"_s << QStringList{u"autocomp-no-such-riscv-gcc"_s}
            << u"spike 'spike' is not found (setting spike, AUTOCOMP_GEMMINI_SPIKE=/path/to/spike)"_s;
        QTest::newRow("trainium: no NKI in python3")
            << u"trainium"_s << QStringList{u"neuronx-cc"_s, u"neuron-profile"_s}
            << u"python3 cannot import the NKI modules of the Neuron SDK (neuronx-cc) and NumPy"_s;
    }

    void probesNameWhatIsMissing()
    {
        QFETCH(QString, target);
        QFETCH(QStringList, standIns);
        QFETCH(QString, reason);
        // The stand-ins come first on the usual PATH (python3 may be a wrapper that needs the rest of it).
        const QString path = m_dir.filePath(
            u"probe-path-"_s
            + QString::fromLatin1(QTest::currentDataTag()).replace(QRegularExpression(u"[^A-Za-z0-9]"_s), u"-"_s));
        QVERIFY(QDir().mkpath(path));
        const QString falseProgram = QStandardPaths::findExecutable(u"false"_s);
        QVERIFY(!falseProgram.isEmpty());
        for (const QString &name : standIns)
            QVERIFY(QFile::link(falseProgram, path + u'/' + name) || QFileInfo::exists(path + u'/' + name));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"PATH"_s, path + u':' + env.value(u"PATH"_s));
        env.insert(u"AUTOCOMP_GEMMINI_TOOLCHAIN"_s, u"autocomp-no-such-riscv-"_s);
        const Outcome targets = run(qEnvironmentVariable("AUTOCOMP_CLI"), {u"targets"_s}, env);
        const QString listing = QString::fromUtf8(targets.out);
        if (target == u"trainium"_s && listing.contains(QRegularExpression(u"(^|\\n)trainium  available"_s)))
            QSKIP("python3 here imports neuronxcc.nki: the NKI probe passes");
        QVERIFY2(QRegularExpression(u"(^|\\n)"_s + target + u"  absent .*\\n    absent: [^\\n]*"_s
                                    + QRegularExpression::escape(reason))
                     .match(listing)
                     .hasMatch(),
                 qPrintable(listing));
    }

    // The descriptors load (the loader rejects unknown keys and bad values, naming file and line) and
    // use only placeholders the evaluator expands or the target's settings.
    void backendsLoadWithKnownPlaceholders_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("metric");
        QTest::addColumn<QStringList>("judgeSteps");
        QTest::addColumn<QStringList>("hardwareSteps");
        // gemmini: spike's count by default; the FireSim step is its hardware (left out unless a search may rank).
        QTest::newRow("gemmini") << u"gemmini"_s << u"instructions"_s
                                 << QStringList{u"lint"_s, u"firesim"_s, u"report"_s} << QStringList{u"firesim"_s};
        QTest::newRow("trainium") << u"trainium"_s << u"latency_ms"_s
                                  << QStringList{u"static"_s, u"check"_s, u"profile"_s}
                                  << QStringList{u"check"_s, u"profile"_s};
    }

    void backendsLoadWithKnownPlaceholders()
    {
        QFETCH(QString, target);
        QFETCH(QString, metric);
        QFETCH(QStringList, judgeSteps);
        QFETCH(QStringList, hardwareSteps);
        Repository repository(QStringList{shipped()});
        QString error;
        const auto t = repository.target(target, &error);
        QVERIFY2(t, qPrintable(error));
        QCOMPARE(t->metric, metric);
        QVERIFY(!t->requires_.isEmpty());
        QVERIFY(!t->availableIf.isEmpty());
        QVERIFY(!t->availableCheck.isEmpty());
        QVERIFY(!t->measurement.isEmpty() && !t->measurement.contains(u'{'));
        QStringList judges, hardware;
        QStringList known = Evaluator::placeholderNames();
        for (const auto &setting : t->settings)
            known << setting.first;
        static const QRegularExpression s_placeholder(u"\\{([a-z_]+(?::[A-Za-z_]+)?)\\}"_s);
        for (const QList<TargetStep> &steps : {t->setupSteps, t->steps}) {
            for (const TargetStep &step : steps) {
                if (step.judge())
                    judges << step.name;
                if (step.needsHardware)
                    hardware << step.name;
                for (const QString &arg : step.run + step.worker + QStringList{step.creates, step.onlyIfExists}) {
                    for (auto it = s_placeholder.globalMatch(arg); it.hasNext();) {
                        const QString name = it.next().captured(1);
                        QVERIFY2(
                            known.contains(name) || name.startsWith(u"env:"_s),
                            qPrintable(u"step '"_s + step.name + u"' uses the unknown placeholder {"_s + name + u'}'));
                    }
                }
            }
        }
        QCOMPARE(judges, judgeSteps);
        QCOMPARE(hardware, hardwareSteps);
        QCOMPARE(!t->hardwareCheck.isEmpty(), !hardwareSteps.isEmpty());

        const QStringList problems = repository.problemNames(target);
        QVERIFY2(problems.size() >= 3, qPrintable(problems.join(u',')));
        for (const QString &name : problems) {
            const auto p = repository.problem(target, name, &error);
            QVERIFY2(p, qPrintable(error));
            QVERIFY(!p->startCode().isEmpty());
            QVERIFY(!p->context.isEmpty());
            if (target == u"gemmini"_s) {
                const QByteArray harness = readAll(p->dir + u"/harness.c"_s);
                QCOMPARE(harness.count("// SUBSTITUTE HERE"), 1);
                QCOMPARE(harness.count("// SUBSTITUTE END"), 1);
                QVERIFY(p->startCode().contains(u"void solution("_s));
                QCOMPARE(p->atol, 0.0); // int8: exact
                QCOMPARE(p->rtol, 0.0);
            } else {
                QCOMPARE(p->entry, u"solution"_s);
                QVERIFY(QFileInfo::exists(p->dir + u"/start.py"_s)); // the setup step compiles it by that name
                const QByteArray reference = readAll(p->referenceFile);
                QVERIFY(reference.contains("def make_inputs(shape, rng)") && reference.contains("def reference("));
            }
        }
    }

    // The agents load and their prompts carry the architecture, the ISA's sections, the measurement
    // with its unit and the menu.
    void agentsBuildPrompts_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QString>("isaEntry");
        QTest::addColumn<QString>("fence");
        QTest::newRow("gemmini") << u"gemmini"_s << u"matmul_bias_relu"_s << u"gemmini_loop_ws("_s << u"```c"_s;
        QTest::newRow("trainium") << u"trainium"_s << u"rmsnorm"_s << u"nisa.nc_matmul(stationary, moving)"_s
                                  << u"```python"_s;
    }

    void agentsBuildPrompts()
    {
        QFETCH(QString, target);
        QFETCH(QString, problem);
        QFETCH(QString, isaEntry);
        QFETCH(QString, fence);
        Repository repository(QStringList{shipped()});
        QString error;
        const auto agent = repository.agent(target, &error);
        QVERIFY2(agent, qPrintable(error));
        QCOMPARE(agent->target, target);
        QVERIFY2(agent->menu.size() >= 12 && agent->menu.size() <= 15, qPrintable(QString::number(agent->menu.size())));
        QVERIFY(!agent->rulesGeneral.isEmpty() && !agent->rulesPlanning.isEmpty() && !agent->rulesCoding.isEmpty());
        QVERIFY(agent->codeExamples.size() >= 3);
        for (const CodeExample &example : agent->codeExamples)
            QVERIFY2(!example.summary.isEmpty() && example.code.contains(u'('), qPrintable(example.name));

        const QList<IsaFilter::Section> sections = IsaFilter::parse(agent->isaDocs);
        QVERIFY2(sections.size() >= 5, qPrintable(QString::number(sections.size())));
        qsizetype entries = 0;
        bool found = false;
        for (const IsaFilter::Section &section : sections) {
            QVERIFY2(!section.entries.isEmpty(), qPrintable(section.title));
            entries += section.entries.size();
            for (const IsaFilter::Entry &entry : section.entries)
                found = found || entry.title.startsWith(isaEntry);
        }
        QVERIFY(entries >= 15);
        QVERIFY2(found, qPrintable(isaEntry));

        const auto t = repository.target(target, &error);
        QVERIFY2(t, qPrintable(error));
        const auto p = repository.problem(target, problem, &error);
        QVERIFY2(p, qPrintable(error));
        Candidate parent;
        parent.code = p->startCode();
        parent.metrics = QJsonObject{{t->metric, 1234.0}};
        PlanPromptInput in;
        in.agent = &*agent;
        in.problem = &*p;
        in.target = &*t;
        in.parent = &parent;
        for (qsizetype i = 0; i < agent->menu.size(); ++i)
            in.menu << MenuEntry{int(i + 1), agent->menu.at(i)};
        const QString plan = PromptBuilder::planPrompt(in);
        QVERIFY2(plan.contains(agent->architecture.section(u'\n', 0, 0)), "the architecture's heading");
        QVERIFY2(plan.contains(isaEntry), "an ISA entry");
        QVERIFY2(plan.contains(t->measurement), "how the target measures");
        QVERIFY2(plan.contains(t->metric + u": 1234 "_s + t->metricUnit), qPrintable(plan.right(3000)));
        QVERIFY2(plan.contains(u"Target settings: "_s), "the settings");
        QVERIFY2(plan.contains(agent->menu.constLast()), "the menu");
        QVERIFY2(plan.contains(p->context.section(u'\n', 0, 0)), "the problem's context");
        const QString code = PromptBuilder::codePrompt(*agent, *p, *t, parent.code,
                                                       u"Hoist the configuration out of the loops."_s);
        QVERIFY(code.contains(isaEntry) && code.contains(agent->rulesCoding.constFirst()));
        QVERIFY2(agent->rulesCoding.join(u' ').contains(fence),
                 "the coding rules name the fence the response parser extracts");
    }

    // Parsers of the vendor tools' output, on fixtures in their exact formats.
    void parsersReadTheExactFormats_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("tool");
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("expected"); // in stdout (JSON) on success, in stderr on failure

        QTest::newRow("summary-json: total_time s -> ms")
            << u"trainium"_s << u"nki_judge.py"_s << u"parse-profile"_s << u"profile_summary.json"_s << 0
            << u"\"latency_ms\": 0.482113"_s;
        QTest::newRow("summary-json without total_time")
            << u"trainium"_s << u"nki_judge.py"_s << u"parse-profile"_s << u"profile_summary_no_total.json"_s << 1
            << u"line 2: 'candidate' has no field 'total_time'"_s;
        QTest::newRow("summary-json cut short")
            << u"trainium"_s << u"nki_judge.py"_s << u"parse-profile"_s << u"profile_summary_truncated.json"_s << 1
            << u"summary-json line 2: not JSON"_s;
        QTest::newRow("nki.benchmark: the last P99 line") << u"trainium"_s << u"nki_judge.py"_s << u"parse-benchmark"_s
                                                          << u"benchmark.log"_s << 0 << u"\"latency_ms\": 0.503"_s;
        QTest::newRow("nki.benchmark: malformed")
            << u"trainium"_s << u"nki_judge.py"_s << u"parse-benchmark"_s << u"benchmark_bad.log"_s << 1
            << u"benchmark line 2: malformed latency (want 'Latency: <ms> ms (P99)')"_s;
        QTest::newRow("spike: a correct run")
            << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-spike"_s << u"spike_ok.log"_s << 0
            << u"\"latencies\": [118204, 96113, 96087, 96090, 96087]"_s;
        QTest::newRow("spike: the harness's own failure")
            << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-spike"_s << u"spike_incorrect.log"_s << 0
            << u"\"failures\": [\"repeat 1: C[3][14] = 127, expected -5\"]"_s;
        QTest::newRow("spike: a malformed latency")
            << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-spike"_s << u"spike_bad_latency.log"_s << 1
            << u"line 12: malformed latency"_s;
        QTest::newRow("spike: a cut checksum") << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-spike"_s
                                               << u"spike_bad_checksum.log"_s << 1 << u"line 14: malformed checksum"_s;
        QTest::newRow("spike: no verdict")
            << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-spike"_s << u"spike_no_verdict.log"_s << 1
            << u"neither 'Correct result' nor 'Incorrect result'"_s;
        QTest::newRow("uartlog: the last latency") << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-firesim"_s
                                                   << u"firesim_uartlog"_s << 0 << u"\"latency_cycles\": 41877"_s;
        QTest::newRow("uartlog: malformed") << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-firesim"_s
                                            << u"firesim_uartlog_bad"_s << 1 << u"uartlog line 3: malformed latency"_s;
        QTest::newRow("uartlog: none") << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-firesim"_s
                                       << u"firesim_uartlog_none"_s << 1
                                       << u"uartlog: no 'Generated implementation latency: <n> cycles' line"_s;
    }

    void parsersReadTheExactFormats()
    {
        QFETCH(QString, target);
        QFETCH(QString, tool);
        QFETCH(QString, command);
        QFETCH(QString, fixture);
        QFETCH(int, exitCode);
        QFETCH(QString, expected);
        const Outcome o = run(u"python3"_s,
                              {TestAccelPacks::tool(target, tool), command, TestAccelPacks::fixture(fixture)});
        QVERIFY2(o.exitCode == exitCode, describe(o).constData());
        QVERIFY2(QString::fromUtf8(exitCode == 0 ? o.out : o.err).contains(expected), describe(o).constData());
    }

    // The static gates, for real: the shipped start code passes, each forbidden construct is named.
    void staticChecksRejectWhatTheyMust_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<QString>("why"); // empty: accepted
        const QString mm = u"matmul_tiled"_s, start = u"void solution("_s;
        QTest::newRow("gemmini: the start code") << u"gemmini"_s << mm << QString() << QString() << QString();
        QTest::newRow("gemmini: printf") << u"gemmini"_s << mm << start
                                         << u"static void f(void) { printf(\"Correct result\\n\"); }\nvoid solution("_s
                                         << u"candidate.c:2: 'printf': prints, exits or jumps"_s;
        QTest::newRow("gemmini: a counter")
            << u"gemmini"_s << mm << start
            << u"static unsigned long t(void) { return read_cycles(); }\nvoid solution("_s
            << u"'read_cycles': reads a counter or CSR"_s;
        QTest::newRow("gemmini: inline asm")
            << u"gemmini"_s << mm << start << u"static void f(void) { __asm__ volatile(\"nop\"); }\nvoid solution("_s
            << u"'__asm__': inline assembly"_s;
        QTest::newRow("gemmini: an include")
            << u"gemmini"_s << mm << start << u"#include <stdlib.h>\nvoid solution("_s << u"'#include'"_s;
        QTest::newRow("gemmini: the reference")
            << u"gemmini"_s << mm << u"tiled_matmul_auto("_s << u"matmul_tiled_reference(M, N, K, 0, 0, 0, 4); ("_s
            << u"'matmul_tiled_reference': uses the harness's own checking code"_s;
        QTest::newRow("gemmini: no solution")
            << u"gemmini"_s << mm << start << u"void kernel("_s << u"no 'void solution(...)' definition"_s;
        QTest::newRow("gemmini: markers in a comment are text")
            << u"gemmini"_s << mm << start << u"/* read_cycles() in a comment */ void solution("_s << QString();
        const QString va = u"vector_add"_s;
        QTest::newRow("trainium: the start code") << u"trainium"_s << va << QString() << QString() << QString();
        QTest::newRow("trainium: import os")
            << u"trainium"_s << va << u"from neuronxcc import nki"_s << u"import os\nfrom neuronxcc import nki"_s
            << u"candidate.py:1: import of 'os'"_s;
        QTest::newRow("trainium: try/except")
            << u"trainium"_s << va << u"    rows, cols = a_input.shape"_s
            << u"    try:\n        rows, cols = a_input.shape\n    except ValueError:\n        rows, cols = 1, 1"_s
            << u"try/except: a kernel that fails must fail visibly"_s;
        QTest::newRow("trainium: not jit")
            << u"trainium"_s << va << u"@nki.jit\n"_s << QString() << u"'solution' is not decorated with @nki.jit"_s;
        QTest::newRow("trainium: runs itself")
            << u"trainium"_s << va << u"    return c_output"_s << u"    nki.benchmark(solution)\n    return c_output"_s
            << u"'.benchmark': the judge runs, times and profiles the kernel"_s;
        QTest::newRow("trainium: module-level code")
            << u"trainium"_s << va << u"import neuronxcc.nki.language as nl"_s
            << u"import neuronxcc.nki.language as nl\nnl.device_print(\"x\", 1)"_s
            << u"module-level code other than imports"_s;
    }

    void staticChecksRejectWhatTheyMust()
    {
        QFETCH(QString, target);
        QFETCH(QString, problem);
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(QString, why);
        Repository repository(QStringList{shipped()});
        QString error;
        const auto p = repository.problem(target, problem, &error);
        QVERIFY2(p, qPrintable(error));
        QString code = p->startCode();
        if (!from.isEmpty()) {
            QVERIFY2(code.contains(from), qPrintable(from));
            code.replace(from, to);
        }
        const QString candidate = m_dir.filePath(u"static-"_s + QString::number(qHash(code))
                                                 + (target == u"gemmini"_s ? u".c"_s : u".py"_s));
        QVERIFY(writeFile(candidate, code.toUtf8()));
        const QString result = candidate + u".result.json"_s;
        const Outcome o = target == u"gemmini"_s
            ? run(u"python3"_s,
                  {tool(target, u"gemmini_judge.py"_s), u"lint"_s, u"--candidate"_s, candidate, u"--result"_s, result})
            : run(u"python3"_s,
                  {tool(target, u"nki_judge.py"_s), u"static"_s, u"--candidate"_s, candidate, u"--entry"_s,
                   u"solution"_s, u"--result"_s, result});
        if (why.isEmpty()) {
            QVERIFY2(o.exitCode == 0, describe(o).constData());
            QVERIFY(!QFileInfo::exists(result));
            return;
        }
        QVERIFY2(o.exitCode == 1, describe(o).constData());
        const QJsonObject r = QJsonDocument::fromJson(readAll(result)).object();
        QCOMPARE(r.value(u"status"_s).toString(), u"rejected"_s);
        QCOMPARE(r.value(u"correct"_s).toBool(true), false);
        QVERIFY2(r.value(u"log"_s).toString().contains(why), qPrintable(r.value(u"log"_s).toString()));
    }

    // The trainium judge's NumPy side, for real where a Python with NumPy is installed: each problem's
    // inputs and reference, the comparison (bit-exact or allclose, as the problem says) and the
    // channel's archives. The kernel side needs a NeuronCore and is not exercised here.
    void trainiumJudgeNumpyParts_data()
    {
        QTest::addColumn<QString>("problem");
        for (const QString &p : Repository(QStringList{shipped()}).problemNames(u"trainium"_s))
            QTest::newRow(qPrintable(p)) << p;
    }

    void trainiumJudgeNumpyParts()
    {
        QFETCH(QString, problem);
        QString python;
        for (const QString &candidate : {QStandardPaths::findExecutable(u"python3"_s), u"/usr/bin/python3"_s})
            if (!candidate.isEmpty() && run(candidate, {u"-c"_s, u"import numpy"_s}).exitCode == 0) {
                python = candidate;
                break;
            }
        if (python.isEmpty())
            QSKIP("no python3 with NumPy here (Debian: python3-numpy)");
        QString error;
        const auto p = Repository(QStringList{shipped()}).problem(u"trainium"_s, problem, &error);
        QVERIFY2(p, qPrintable(error));
        const Outcome o = run(python,
                              {fixture(u"check_nki_judge.py"_s), shipped(), problem, p->shapeArgument(p->benchShape),
                               QString::number(p->rtol, 'g', 17), QString::number(p->atol, 'g', 17)});
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        QVERIFY2(o.out.contains("ok: an object array is refused (no pickles)"), describe(o).constData());
    }

    // The paste step: the candidate lands between the markers, compiler messages keep naming the
    // candidate's and the harness's own lines, and a harness without markers is an error.
    void pasteKeepsTheHarnessAndNamesLines()
    {
        const QString out = m_dir.filePath(u"paste"_s);
        const QString harness = shipped() + u"/sols/gemmini/matmul_tiled/harness.c"_s;
        const QString candidate = shipped() + u"/sols/gemmini/matmul_tiled/matmul_tiled_start.c"_s;
        const Outcome o = run(u"python3"_s,
                              {tool(u"gemmini"_s, u"gemmini_paste.py"_s), u"--harness"_s, harness, u"--candidate"_s,
                               candidate, u"--shape"_s, u"M=128,N=128,K=256"_s, u"--key"_s, u"abc123"_s, u"--out-dir"_s,
                               out});
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        const QByteArray pasted = readAll(out + u"/test.c"_s);
        const QByteArray header = readAll(out + u"/autocomp_shape.h"_s);
        QVERIFY(header.contains("#define M 128") && header.contains("#define K 256")
                && header.contains("#define AUTOCOMP_KEY \"abc123\""));
        const qsizetype begin = pasted.indexOf("// SUBSTITUTE HERE"), end = pasted.indexOf("// SUBSTITUTE END");
        QVERIFY(begin >= 0 && end > begin);
        const QByteArray between = pasted.mid(begin, end - begin);
        QVERIFY(between.contains("#line 1 \"candidate.c\"") && between.contains(readAll(candidate).trimmed()));
        // After the candidate, the harness's own numbering resumes at the END marker's line.
        const QByteArray original = readAll(harness);
        const int endLine = int(original.left(original.indexOf("// SUBSTITUTE END")).count('\n')) + 1;
        QVERIFY2(between.contains(QByteArray("#line " + QByteArray::number(endLine) + " \"harness.c\"")),
                 between.constData());
        QCOMPARE(pasted.mid(end), original.mid(original.indexOf("// SUBSTITUTE END")));

        QVERIFY(writeFile(m_dir.filePath(u"no-markers.c"_s), "int main(void) { return 0; }\n"));
        const Outcome bad = run(u"python3"_s,
                                {tool(u"gemmini"_s, u"gemmini_paste.py"_s), u"--harness"_s,
                                 m_dir.filePath(u"no-markers.c"_s), u"--candidate"_s, candidate, u"--shape"_s, u"M=1"_s,
                                 u"--key"_s, u"k"_s, u"--out-dir"_s, out});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("no-markers.c: needs '// SUBSTITUTE HERE' followed by '// SUBSTITUTE END'"),
                 describe(bad).constData());
        const Outcome badShape = run(u"python3"_s,
                                     {tool(u"gemmini"_s, u"gemmini_paste.py"_s), u"--harness"_s, harness, u"--shape"_s,
                                      u"M=12x"_s, u"--key"_s, u"k"_s, u"--out-dir"_s, out});
        QCOMPARE(badShape.exitCode, 2);
        QVERIFY2(badShape.err.contains("shape: 'M=12x' is not NAME=INTEGER"), describe(badShape).constData());
    }

    // Every gemmini harness built for the host: five repeats, data that follows from the key alone
    // (the same key gives the same checksums, another key other ones), and a verdict line.
    void gemminiHarnessesRunOnTheHost_data()
    {
        QTest::addColumn<QString>("problem");
        for (const QString &p : Repository(QStringList{shipped()}).problemNames(u"gemmini"_s))
            QTest::newRow(qPrintable(p)) << p;
    }

    void gemminiHarnessesRunOnTheHost()
    {
        QFETCH(QString, problem);
        const Outcome a = hostHarness(problem, u"key1"_s);
        QVERIFY2(a.exitCode == 0, describe(a).constData());
        const Outcome again = hostHarness(problem, u"key1"_s);
        const Outcome b = hostHarness(problem, u"key2"_s);
        QVERIFY2(again.exitCode == 0 && b.exitCode == 0, describe(b).constData());
        auto checksums = [](const QByteArray &out) {
            QByteArrayList sums;
            for (const QByteArray &line : out.split('\n'))
                if (line.startsWith("repeat "))
                    sums << line.mid(line.indexOf("checksum ") + 9);
            return sums;
        };
        const QByteArrayList first = checksums(a.out), second = checksums(again.out), other = checksums(b.out);
        QCOMPARE(first.size(), 5);
        QCOMPARE(QSet<QByteArray>(first.begin(), first.end()).size(), 5); // fresh data per repeat
        QCOMPARE(second, first);
        QCOMPARE(other.size(), 5);
        for (int i = 0; i < 5; ++i)
            QVERIFY(other.at(i) != first.at(i));
        QVERIFY(a.out.startsWith(QByteArray("autocomp-gemmini: " + problem.toUtf8() + " "
                                            + benchShape(u"gemmini"_s, problem).toUtf8() + " key=key1 repeats=5\n")));
        QVERIFY(a.out.endsWith("Correct result\n"));
    }

    // The judge's decision on what a run under spike printed: it rebuilds the harness for the host
    // with the same key and accepts only the checksums of its own run.
    void gemminiJudgeChecksSpikeAgainstItsOwnRun()
    {
        const QString problem = u"matmul_bias_relu"_s, key = u"5e1f0c2a9b8d7e6f5a4b3c2d"_s;
        const Outcome host = hostHarness(problem, key);
        QVERIFY2(host.exitCode == 0, describe(host).constData());

        const QString ok = m_dir.filePath(u"spike-ok.log"_s);
        QVERIFY(writeFile(ok, asSpikeLog(host.out, {70311, 52007, 51988, 52010, 51996})));
        Outcome o = judgeReport(problem, key, ok);
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        QJsonObject r = lastResult(ok);
        QCOMPARE(r.value(u"status"_s).toString(), u"ok"_s);
        QVERIFY(r.value(u"correct"_s).toBool());
        const QJsonObject metrics = r.value(u"metrics"_s).toObject();
        QCOMPARE(metrics.value(u"instructions"_s).toInt(), 51996); // the last repeat, as Autocomp reads it
        QCOMPARE(metrics.value(u"spike_rdinstret"_s).toInt(), 51996);
        QVERIFY(!metrics.contains(u"firesim_cycles"_s));
        QVERIFY(!metrics.contains(u"cycles"_s)); // a spike count is never called cycles
        const QString feedback = r.value(u"feedback"_s).toVariant().toStringList().join(u'\n');
        // 200 x 64 x 192 MACs; operands 200*192 + 192*64 + 4*64 + 200*64 bytes.
        QVERIFY2(feedback.contains(u"2457600 int8 MACs"_s) && feedback.contains(u"scratchpad 256 KB"_s)
                     && feedback.contains(u"accumulator 64 KB"_s),
                 qPrintable(feedback));

        // FireSim's cycles, where its uartlog is there, are the cycles (the score with metric cycles).
        QVERIFY(writeFile(m_dir.filePath(u"judge-spike-ok/uartlog"_s), readAll(fixture(u"firesim_uartlog"_s))));
        o = judgeReport(problem, key, ok, {u"--metric"_s, u"cycles"_s});
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        r = lastResult(ok);
        QCOMPARE(r.value(u"metrics"_s).toObject().value(u"cycles"_s).toInt(), 41877);
        QCOMPARE(r.value(u"metrics"_s).toObject().value(u"instructions"_s).toInt(), 51996);
        QVERIFY(QFile::remove(m_dir.filePath(u"judge-spike-ok/uartlog"_s)));

        // "Correct result" with one output that differs from the judge's computation.
        QByteArray forged = asSpikeLog(host.out, {});
        const qsizetype at = forged.indexOf("repeat 2: checksum ") + 19;
        forged[at] = forged[at] == '0' ? '1' : '0';
        const QString forgedLog = m_dir.filePath(u"spike-forged.log"_s);
        QVERIFY(writeFile(forgedLog, forged));
        o = judgeReport(problem, key, forgedLog);
        QCOMPARE(o.exitCode, 1);
        r = lastResult(forgedLog);
        QCOMPARE(r.value(u"status"_s).toString(), u"incorrect"_s);
        QVERIFY2(r.value(u"log"_s).toString().contains(u"repeat 2: the output's checksum"_s),
                 qPrintable(r.value(u"log"_s).toString()));

        // A run of another key (a replayed log) is not this evaluation's.
        const QString replay = m_dir.filePath(u"spike-replay.log"_s);
        QVERIFY(writeFile(replay, asSpikeLog(hostHarness(problem, u"another"_s).out, {})));
        o = judgeReport(problem, key, replay);
        QCOMPARE(o.exitCode, 1);
        QVERIFY2(lastResult(replay).value(u"log"_s).toString().contains(u"key=another"_s), describe(o).constData());

        // The harness's own failure report is the log.
        QByteArray failing = asSpikeLog(host.out, {});
        failing.replace("Correct result", "Incorrect result: repeat 0: C[0][3] = 0, expected 17\nIncorrect result");
        const QString failingLog = m_dir.filePath(u"spike-failing.log"_s);
        QVERIFY(writeFile(failingLog, failing));
        o = judgeReport(problem, key, failingLog);
        QCOMPARE(o.exitCode, 1);
        QVERIFY(lastResult(failingLog).value(u"log"_s).toString().contains(u"C[0][3] = 0, expected 17"_s));

        // Output that is not the harness's (a truncated run) is incorrect, naming the line.
        const QString truncated = m_dir.filePath(u"spike-truncated.log"_s);
        QVERIFY(writeFile(truncated, asSpikeLog(host.out, {}).left(300)));
        o = judgeReport(problem, key, truncated);
        QCOMPARE(o.exitCode, 1);
        QCOMPARE(lastResult(truncated).value(u"status"_s).toString(), u"incorrect"_s);
    }

    // The gemmini score on recorded outputs (data/gemmini_metrics: the harness's lines with the host
    // build's checksums for one key, and the counts the issue reported from spike: 630 for the library's
    // start code, 217 for one big loop_ws, 13,750 for a hand-tiled kernel; FireSim uartlogs in the same
    // format). On spike the count is `instructions`, never `cycles`; FireSim's is `cycles`; the peak
    // check (at most 16 x 16 MACs per cycle) applies to both.
    void gemminiMetricsNamedPerSimulator_data()
    {
        QTest::addColumn<QString>("spikeLog");
        QTest::addColumn<QString>("uartlog");
        QTest::addColumn<QString>("metric");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("scoreKey");
        QTest::addColumn<int>("score");
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QString>("logText");
        QTest::newRow("spike: the library's start code")
            << u"spike_start.log"_s << QString() << u"instructions"_s << 0 << u"ok"_s << u"instructions"_s << 630
            << u"spike's count is not a cycle count: 630 instructions for 4194304 MACs would be 6658 "
               "MACs per cycle, 26.0x the 16x16 array's peak of 256; the call needs at least 16384 cycles"_s
            << u"score 630 instructions (spike: retired instructions, not cycles)"_s;
        QTest::newRow("spike: one big loop_ws")
            << u"spike_big_loop_ws.log"_s << QString() << u"instructions"_s << 0 << u"ok"_s << u"instructions"_s << 217
            << u"217 instructions for 4194304 MACs would be 19329 MACs per cycle, 75.5x"_s
            << u"score 217 instructions"_s;
        QTest::newRow("spike: a hand-tiled kernel")
            << u"spike_handtiled.log"_s << QString() << u"instructions"_s << 0 << u"ok"_s << u"instructions"_s << 13750
            << u"13750 instructions for 4194304 MACs would be 305 MACs per cycle, 1.2x"_s
            << u"score 13750 instructions"_s;
        QTest::newRow("FireSim: cycles") << u"spike_start.log"_s << u"firesim_uartlog"_s << u"cycles"_s << 0 << u"ok"_s
                                         << u"cycles"_s << 45102 << QString() << u"score 45102 cycles (FireSim)"_s;
        QTest::newRow("FireSim: beyond the array's peak")
            << u"spike_start.log"_s << u"firesim_uartlog_impossible"_s << u"cycles"_s << 0 << u"ok"_s << u"cycles"_s
            << 9012
            << u"faster than the array's peak: 465 MACs per cycle > 256 (FireSim: 9012 cycles for "
               "4194304 MACs, at least 16384 are needed)"_s
            << u"score 9012 cycles (FireSim)"_s;
        QTest::newRow("spike's score beside FireSim's cycles")
            << u"spike_start.log"_s << u"firesim_uartlog"_s << u"instructions"_s << 0 << u"ok"_s << u"instructions"_s
            << 630 << u"spike's count is not a cycle count: 630 instructions"_s << u"score 630 instructions"_s;
        QTest::newRow("cycles without FireSim")
            << u"spike_start.log"_s << QString() << u"cycles"_s << 127 << u"error"_s << QString() << 0 << QString()
            << u"metric 'cycles' needs FireSim's uartlog, and this evaluation has none"_s;
        QTest::newRow("an unknown metric")
            << u"spike_start.log"_s << QString() << u"latency"_s << 127 << u"error"_s << QString() << 0 << QString()
            << u"setting metric is 'latency': it must be 'instructions' (spike) or 'cycles' (FireSim)"_s;
    }

    void gemminiMetricsNamedPerSimulator()
    {
        QFETCH(QString, spikeLog);
        QFETCH(QString, uartlog);
        QFETCH(QString, metric);
        QFETCH(int, exitCode);
        QFETCH(QString, status);
        QFETCH(QString, scoreKey);
        QFETCH(int, score);
        QFETCH(QString, flag);
        QFETCH(QString, logText);
        const QString tag =
            QString::fromLatin1(QTest::currentDataTag()).replace(QRegularExpression(u"[^A-Za-z0-9]+"_s), u"-"_s);
        const QString log = m_dir.filePath(u"metrics-"_s + tag + u".log"_s);
        QVERIFY(writeFile(log, readAll(metricsFixture(spikeLog))));
        if (!uartlog.isEmpty())
            QVERIFY(
                writeFile(m_dir.filePath(u"judge-metrics-"_s + tag + u"/uartlog"_s), readAll(metricsFixture(uartlog))));
        const Outcome o = judgeReport(u"matmul_tiled"_s, u"0f1e2d3c4b5a69788796a5b4"_s, log, {u"--metric"_s, metric});
        QVERIFY2(o.exitCode == exitCode, describe(o).constData());
        const QJsonObject r = lastResult(log);
        QCOMPARE(r.value(u"status"_s).toString(), status);
        QVERIFY2(r.value(u"log"_s).toString().contains(logText), qPrintable(r.value(u"log"_s).toString()));
        if (status != u"ok"_s) {
            QVERIFY(o.out.contains(logText.toUtf8())); // the step's own output says it, for the evaluator's `error`
            return;
        }
        const QJsonObject metrics = r.value(u"metrics"_s).toObject();
        QCOMPARE(metrics.value(scoreKey).toInt(), score);
        // spike's count is always there, as instructions; cycles only where FireSim counted them.
        QVERIFY(metrics.value(u"instructions"_s).isDouble());
        QCOMPARE(metrics.contains(u"cycles"_s), !uartlog.isEmpty());
        const QString spikeCount = QString::number(metrics.value(u"instructions"_s).toInt());
        const QStringList feedback = r.value(u"feedback"_s).toVariant().toStringList();
        QVERIFY2(feedback.join(u'\n').contains(spikeCount + u" retired instructions"_s),
                 qPrintable(feedback.join(u'\n')));
        for (const QString &line : feedback + QStringList{r.value(u"log"_s).toString()})
            QVERIFY2(!line.contains(spikeCount + u" cycles"_s) && !line.contains(u"spike cycle"_s), qPrintable(line));
        const QStringList flags = r.value(u"flags"_s).toVariant().toStringList();
        if (flag.isEmpty())
            QVERIFY2(flags.isEmpty(), qPrintable(flags.join(u'\n')));
        else
            QVERIFY2(flags.join(u'\n').contains(flag), qPrintable(flags.join(u'\n')));
    }

    // The target's metric and unit follow the setting metric: every view (the CLI, the prompts, the
    // workbench's columns and chart, the exports) shows the target's name for it, the unit stored with the run
    // (or, for a run stored before runs kept it, the one Repository::metricUnitOf() finds).
    void gemminiTargetNamesItsMetric()
    {
        {
            const auto t = Repository(QStringList{shipped()}).target(u"gemmini"_s, nullptr);
            QVERIFY(t);
            QCOMPARE(t->metric, u"instructions"_s);
            QCOMPARE(t->metricUnit, u"instructions"_s);
            RunInfo run;
            run.target = u"gemmini"_s;
            run.metric = t->metric;
            QCOMPARE(Repository(QStringList{shipped()}).metricUnitOf(run), u"instructions"_s);
            QVERIFY2(t->measurement.contains(u"as instructions"_s)
                         && t->measurement.contains(u"counts retired instructions, not cycles"_s),
                     qPrintable(t->measurement));
        }
        qputenv("AUTOCOMP_GEMMINI_METRIC", "cycles");
        const auto firesim = Repository(QStringList{shipped()}).target(u"gemmini"_s, nullptr);
        qunsetenv("AUTOCOMP_GEMMINI_METRIC");
        QVERIFY(firesim);
        QCOMPARE(firesim->metric, u"cycles"_s);
        QCOMPARE(firesim->metricUnit, u"cycles"_s);
        QVERIFY(firesim->measurement.contains(u"as cycles"_s));

        // `autocomp targets` names it the same way, whether or not the tools are here.
        for (const QByteArray &value : {QByteArray(), QByteArray("cycles")}) {
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            if (!value.isEmpty())
                env.insert(u"AUTOCOMP_GEMMINI_METRIC"_s, QString::fromLatin1(value));
            const Outcome targets = run(qEnvironmentVariable("AUTOCOMP_CLI"), {u"targets"_s}, env);
            const QString want = value.isEmpty() ? u"[metric instructions, instructions]"_s
                                                 : u"[metric cycles, cycles]"_s;
            QVERIFY2(QRegularExpression(u"(^|\\n)gemmini  [^\\n]*"_s + QRegularExpression::escape(want))
                         .match(QString::fromUtf8(targets.out))
                         .hasMatch(),
                     describe(targets).constData());
        }
    }

    // Whether a search may rank (the target's hardware_check): by spike's count only with the opt-in
    // spike_rank: instructions; by cycles only with FireSim. Otherwise the reason names the setting.
    void gemminiRankCheck_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("line");
        QTest::newRow("spike, no opt-in")
            << QStringList{u"--metric"_s, u"instructions"_s, u"--spike-rank"_s, u"off"_s} << 1
            << u"spike counts retired instructions, not cycles (one loop_ws is one instruction), so this target only "
               "checks correctness on spike: to let a search optimize instruction counts set spike_rank: instructions "
               "(AUTOCOMP_GEMMINI_SPIKE_RANK=instructions)"_s;
        QTest::newRow("spike, opted in")
            << QStringList{u"--metric"_s, u"instructions"_s, u"--spike-rank"_s, u"instructions"_s} << 0
            << u"ok: ranked by spike's retired-instruction count (spike_rank: instructions), not by cycles"_s;
        QTest::newRow("cycles, no FireSim")
            << QStringList{u"--metric"_s, u"cycles"_s, u"--spike-rank"_s, u"instructions"_s} << 1
            << u"metric 'cycles' needs FireSim: setting firesim_dir is empty"_s;
        QTest::newRow("cycles, FireSim") << QStringList{u"--metric"_s, u"cycles"_s,        u"--spike-rank"_s,
                                                        u"off"_s,      u"--firesim-dir"_s, u"@firesim"_s}
                                         << 0 << u"ok: ranked by FireSim cycles"_s;
        QTest::newRow("an unknown metric")
            << QStringList{u"--metric"_s, u"latency"_s, u"--spike-rank"_s, u"off"_s} << 1
            << u"setting metric is 'latency': it must be 'instructions' (spike) or 'cycles' (FireSim)"_s;
    }

    void gemminiRankCheck()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, line);
        const QString firesim = m_dir.filePath(u"firesim"_s);
        QVERIFY(writeFile(firesim + u"/deploy/config_runtime.yaml"_s, "# a FireSim manager's runtime config\n"));
        args.replaceInStrings(u"@firesim"_s, firesim);
        const Outcome o = run(u"python3"_s,
                              QStringList{tool(u"gemmini"_s, u"gemmini_judge.py"_s), u"rank-check"_s} + args);
        QVERIFY2(o.exitCode == exitCode && o.out.contains(line.toUtf8()), describe(o).constData());
    }

private:
    // The bare-metal toolchain the steps use (Debian's, by default names) and a gemmini-rocc-tests
    // checkout with its submodules; empty with the reason when either is missing.
    QString gemminiToolsOrSkipReason(QString *rocc)
    {
        if (QStandardPaths::findExecutable(u"riscv64-unknown-elf-gcc"_s).isEmpty())
            return u"riscv64-unknown-elf-gcc is not installed (Debian: gcc-riscv64-unknown-elf "
                   u"picolibc-riscv64-unknown-elf, "
                   "packaging/install-deps.sh --gemmini)"_s;
        const Outcome specs = run(u"riscv64-unknown-elf-gcc"_s, {u"-print-file-name=picolibc.specs"_s});
        if (!QFileInfo(QString::fromUtf8(specs.out.trimmed())).isAbsolute())
            return u"riscv64-unknown-elf-gcc finds no picolibc.specs (Debian: picolibc-riscv64-unknown-elf)"_s;
        *rocc = qEnvironmentVariable("AUTOCOMP_GEMMINI_ROCC_TESTS");
        if (rocc->isEmpty()) {
            const auto t = Repository(QStringList{shipped()}).target(u"gemmini"_s, nullptr);
            for (const auto &setting : t ? t->settings : QList<QPair<QString, QString>>{})
                if (setting.first == u"rocc_tests"_s)
                    *rocc = setting.second;
        }
        for (const char *rel : {"/include/gemmini.h", "/rocc-software/src/xcustom.h",
                                "/riscv-tests/benchmarks/common/crt.S", "/riscv-tests/env/encoding.h"})
            if (!QFileInfo::exists(*rocc + QLatin1String(rel)))
                return u"no gemmini-rocc-tests checkout with its submodules at '"_s + *rocc
                    + u"' (set AUTOCOMP_GEMMINI_ROCC_TESTS; it has no "_s + QLatin1String(rel + 1) + u')';
        return {};
    }

    // A stand-in for spike under this test's folder (as /opt/chipyard/bin/spike would be), with the
    // installation a real one has: lib/libgemmini.so (here a text file it reads) beside bin/. In place of
    // simulating Gemmini it builds the pasted harness for the host (the judge's own build: no candidate)
    // and prints what a correct run prints, with a fixed count. Returns its path.
    QString standInSpike()
    {
        const QString prefix = m_dir.filePath(u"opt/chipyard"_s);
        const QString spike = prefix + u"/bin/spike"_s;
        if (QFileInfo::exists(spike))
            return spike;
        if (!writeFile(prefix + u"/lib/libgemmini.so"_s, "libgemmini stand-in\n"))
            return {};
        QStringList headers = QDir(shipped() + u"/backends/gemmini/include"_s).entryList({u"*.h"_s}, QDir::Files);
        for (QString &h : headers)
            h = shipped() + u"/backends/gemmini/include/"_s + h;
        for (const QString &problem : Repository(QStringList{shipped()}).problemNames(u"gemmini"_s))
            for (const QString &h :
                 QDir(shipped() + u"/sols/gemmini/"_s + problem).entryList({u"*_reference.h"_s}, QDir::Files))
                headers << shipped() + u"/sols/gemmini/"_s + problem + u'/' + h;
        for (const QString &h : std::as_const(headers))
            if (!writeFile(prefix + u"/share/standin/"_s + QFileInfo(h).fileName(), readAll(h)))
                return {};
        const QByteArray script =
            "#!/bin/sh\n"
            "prefix=$(cd \"$(dirname \"$0\")/..\" && pwd)\n"
            "[ \"$1\" = --extension=gemmini ] || { echo \"stand-in spike: want --extension=gemmini, got $1\" >&2; exit "
            "2; }\n"
            "[ -s \"$2\" ] || { echo \"stand-in spike: no program $2\" >&2; exit 2; }\n"
            "read -r lib < \"$prefix/lib/libgemmini.so\" || exit 3\n"
            "echo \"stand-in spike: $lib from $prefix/lib\"\n"
            "build=$(dirname \"$2\")\n"
            "cc -O1 -std=gnu99 -DAUTOCOMP_GEMMINI_HOST -I\"$build\" -I\"$prefix/share/standin\" -o /tmp/standin "
            "\"$build/test.c\" || exit 4\n"
            "/tmp/standin | awk '/^repeat /{print \"Generated implementation latency: 4321 cycles\"; "
            "print \"Generated implementation instructions: 4319\"} {print}'\n";
        if (!writeFile(spike, script)
            || !QFile::setPermissions(spike, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner))
            return {};
        return spike;
    }

    // `autocomp eval` of the problem's start code, or of the file `code`.
    Outcome gemminiEval(const QString &problem, const QMap<QString, QString> &settings, const QStringList &extra = {},
                        const QString &code = {})
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (auto it = settings.cbegin(); it != settings.cend(); ++it)
            env.insert(it.key(), it.value());
        const QStringList what = code.isEmpty() ? QStringList{u"--start"_s} : QStringList{u"--code"_s, code};
        return run(qEnvironmentVariable("AUTOCOMP_CLI"),
                   QStringList{u"eval"_s, u"--target"_s, u"gemmini"_s, u"--problem"_s, problem, u"--json"_s} + what
                       + extra,
                   env);
    }

    static QJsonObject stepNamed(const QJsonObject &result, const QString &name)
    {
        for (const QJsonValue step : result.value(u"steps"_s).toArray())
            if (step.toObject().value(u"name"_s).toString() == name)
                return step.toObject();
        return {};
    }

private Q_SLOTS:
    // Every gemmini problem's start code through the real steps, sandboxed: lint, paste, the compile step
    // with Debian's toolchain (picolibc's specs, riscv-tests' crt.S, syscalls.c and test.ld) building the
    // bare-metal harness, the stand-in spike found outside /usr with its lib/, and the judge: `ok`, scored
    // in instructions (spike_rank: instructions). Without the opt-in the same evaluation checks correctness
    // and ends no_hardware, saying which setting would let a search rank.
    void gemminiEvaluatesWithItsToolsOutsideUsr_data() { gemminiHarnessesRunOnTheHost_data(); }

    void gemminiEvaluatesWithItsToolsOutsideUsr()
    {
        QFETCH(QString, problem);
        QString rocc;
        if (const QString why = gemminiToolsOrSkipReason(&rocc); !why.isEmpty())
            QSKIP(qPrintable(why));
        const QString spike = standInSpike();
        QVERIFY(!spike.isEmpty());
        const QMap<QString, QString> settings{{u"AUTOCOMP_GEMMINI_SPIKE"_s, spike},
                                              {u"AUTOCOMP_GEMMINI_ROCC_TESTS"_s, rocc},
                                              {u"AUTOCOMP_GEMMINI_SPIKE_RANK"_s, u"instructions"_s}};
        const Outcome o = gemminiEval(problem, settings, {u"--sandbox"_s, u"required"_s});
        const QJsonObject r = QJsonDocument::fromJson(o.out).object();
        const QJsonObject compile = stepNamed(r, u"compile"_s);
        QVERIFY2(compile.value(u"exit_code"_s).toInt(-1) == 0, describe(o).constData());
        const QStringList command = compile.value(u"command"_s).toVariant().toStringList();
        QVERIFY2(command.value(0).endsWith(u"riscv64-unknown-elf-gcc"_s)
                     && command.value(1).endsWith(u"/specs/libc-auto.specs"_s) && command.contains(u"-nostartfiles"_s),
                 qPrintable(command.join(u' ')));
        const QJsonObject spikeStep = stepNamed(r, u"spike"_s);
        QVERIFY2(spikeStep.value(u"log"_s).toString().contains(u"stand-in spike: libgemmini stand-in from "_s
                                                               + QFileInfo(spike).absolutePath().chopped(4)
                                                               + u"/lib"_s),
                 describe(o).constData());
        QVERIFY2(spikeStep.value(u"command"_s).toVariant().toStringList().contains(spike), describe(o).constData());
        QVERIFY2(r.value(u"status"_s).toString() == u"ok"_s && r.value(u"correct"_s).toBool(), describe(o).constData());
        QCOMPARE(o.exitCode, 0);
        const QJsonObject metrics = r.value(u"metrics"_s).toObject();
        QCOMPARE(metrics.value(u"instructions"_s).toInt(), 4321);
        QVERIFY(!metrics.contains(u"cycles"_s));
        for (const QJsonValue flag : r.value(u"flags"_s).toArray())
            QVERIFY2(!flag.toString().startsWith(u"unsandboxed"_s), qPrintable(flag.toString()));

        if (problem != u"matmul_tiled"_s)
            return;
        // No opt-in: correctness checked, the count reported, no score; the reason names the setting.
        QMap<QString, QString> noOptIn = settings;
        noOptIn.remove(u"AUTOCOMP_GEMMINI_SPIKE_RANK"_s);
        const Outcome checked = gemminiEval(problem, noOptIn);
        const QJsonObject c = QJsonDocument::fromJson(checked.out).object();
        QVERIFY2(c.value(u"status"_s).toString() == u"no_hardware"_s, describe(checked).constData());
        QVERIFY2(c.value(u"log"_s).toString().contains(u"set spike_rank: instructions"_s)
                     && c.value(u"log"_s).toString().contains(u"correct in every repeat"_s),
                 describe(checked).constData());
        QCOMPARE(c.value(u"metrics"_s).toObject().value(u"instructions"_s).toInt(), 4321);
        // `autocomp targets` says the same before any run.
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (auto it = noOptIn.cbegin(); it != noOptIn.cend(); ++it)
            env.insert(it.key(), it.value());
        const Outcome targets = run(qEnvironmentVariable("AUTOCOMP_CLI"), {u"targets"_s}, env);
        QVERIFY2(QRegularExpression(u"(^|\\n)gemmini  compile only [^\\n]*\\[metric instructions, instructions\\]\\n   "
                                    u" no hardware: spike counts "
                                    "retired instructions, not cycles"_s)
                     .match(QString::fromUtf8(targets.out))
                     .hasMatch(),
                 describe(targets).constData());
        QVERIFY2(targets.out.contains(QByteArray("spike at " + spike.toUtf8())), describe(targets).constData());

        // The agent's worked examples that define solution() pass the lint and build against the real
        // gemmini.h (the stand-in does not run them: their results on Gemmini need a real spike).
        const auto agent = Repository(QStringList{shipped()}).agent(u"gemmini"_s, nullptr);
        QVERIFY(agent);
        int built = 0;
        for (const CodeExample &example : agent->codeExamples) {
            if (!example.code.contains(u"void solution("_s))
                continue;
            const QString file = m_dir.filePath(u"example-"_s + example.name + u".c"_s);
            QVERIFY(writeFile(file, example.code.toUtf8()));
            const Outcome e = gemminiEval(problem, settings, {}, file);
            const QJsonObject er = QJsonDocument::fromJson(e.out).object();
            QVERIFY2(stepNamed(er, u"lint"_s).value(u"exit_code"_s).toInt(-1) == 0
                         && stepNamed(er, u"compile"_s).value(u"exit_code"_s).toInt(-1) == 0,
                     qPrintable(example.name + u": "_s + QString::fromUtf8(describe(e))));
            ++built;
        }
        QVERIFY(built >= 2);
    }

    // explicit_tiles' tile fits what tiled_matmul allows on the weight-stationary path, which double-
    // buffers: A and B tiles together at most half the scratchpad (8192 rows), the C tile at most half
    // the accumulator (512 rows); the rules and the ISA notes state those limits.
    void gemminiExampleTilesFitWeightStationary()
    {
        const auto agent = Repository(QStringList{shipped()}).agent(u"gemmini"_s, nullptr);
        QVERIFY(agent);
        QString code;
        for (const CodeExample &example : agent->codeExamples)
            if (example.name == u"explicit_tiles"_s)
                code = example.code;
        QVERIFY(!code.isEmpty());
        // tiled_matmul(..., repeating_bias, tile_I, tile_J, tile_K, transpose_A, ...): the three numbers after the bias
        // flag.
        const auto m = QRegularExpression(u"0, false,\\s*(\\d+), (\\d+), (\\d+),\\s*false"_s).match(code);
        QVERIFY2(m.hasMatch(), qPrintable(code));
        const int tileI = m.captured(1).toInt(), tileJ = m.captured(2).toInt(), tileK = m.captured(3).toInt();
        const int dim = 16, i = 128 / dim, j = 128 / dim, k = 256 / dim; // matmul_tiled's shape
        QVERIFY(tileI <= i && tileJ <= j && tileK <= k);
        QVERIFY2((tileI * tileK + tileK * tileJ) * dim <= 4 * 4096 / 2, "A + B tiles beyond half the scratchpad");
        QVERIFY2(tileI * tileJ * dim <= 1024 / 2,
                 "the C tile beyond half the accumulator: 'Not enough space in accumulator to store C'");
        const QByteArray rules = readAll(shipped() + u"/agents/gemmini/rules.yaml"_s);
        QVERIFY(rules.contains("at most 8192 scratchpad rows together")
                && rules.contains("at most 512 accumulator rows"));
        QVERIFY(rules.contains("Not enough space in accumulator to store C"));
        const QByteArray isa = readAll(shipped() + u"/agents/gemmini/isa_docs.md"_s);
        QVERIFY(isa.contains("at most 8,192 scratchpad rows") && isa.contains("at most 512\naccumulator rows"));
    }

    // spike named by the setting but not there: the target is absent, naming it, and nothing runs. There
    // but unable to start (an interpreter that is missing): the spike step's `error`, naming it, never
    // `incorrect`.
    void gemminiMissingOrBrokenSpike()
    {
        // Missing: needs no other tool (the probe names everything that is missing).
        QString rocc;
        const QString why = gemminiToolsOrSkipReason(&rocc);
        const QString missing = m_dir.filePath(u"opt/nowhere/bin/spike"_s);
        const Outcome absent = gemminiEval(
            u"matmul_tiled"_s, {{u"AUTOCOMP_GEMMINI_SPIKE"_s, missing}, {u"AUTOCOMP_GEMMINI_ROCC_TESTS"_s, rocc}});
        QCOMPARE(absent.exitCode, 1);
        QVERIFY2(absent.err.contains("target 'gemmini' is absent on this machine: ")
                     && absent.err.contains(QByteArray("spike '" + missing.toUtf8()
                                                       + "' is not found (setting spike, AUTOCOMP_GEMMINI_SPIKE")),
                 describe(absent).constData());
        QVERIFY(absent.out.isEmpty());

        if (!why.isEmpty())
            QSKIP(qPrintable(u"the broken spike needs the rest of the tools: "_s + why));

        const QString broken = m_dir.filePath(u"opt/broken/bin/spike"_s);
        QVERIFY(writeFile(broken, "#!/opt/autocomp-no-such-interpreter\n"));
        QVERIFY(
            QFile::setPermissions(broken, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
        const Outcome o = gemminiEval(u"matmul_tiled"_s,
                                      {{u"AUTOCOMP_GEMMINI_SPIKE"_s, broken},
                                       {u"AUTOCOMP_GEMMINI_ROCC_TESTS"_s, rocc},
                                       {u"AUTOCOMP_GEMMINI_SPIKE_RANK"_s, u"instructions"_s}});
        const QJsonObject r = QJsonDocument::fromJson(o.out).object();
        QVERIFY2(r.value(u"status"_s).toString() == u"error"_s, describe(o).constData());
        QCOMPARE(o.exitCode, 1);
        QCOMPARE(stepNamed(r, u"compile"_s).value(u"exit_code"_s).toInt(-1), 0);
        QVERIFY2(r.value(u"log"_s).toString().contains(u"cannot start "_s + broken), describe(o).constData());
    }
};

QTEST_GUILESS_MAIN(TestAccelPacks)
#include "tst_accel_packs.moc"
