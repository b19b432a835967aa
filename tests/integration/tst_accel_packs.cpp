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
// With AUTOCOMP_GEMMINI_ROCC_TESTS naming a gemmini-rocc-tests checkout (and riscv64-linux-gnu-gcc
// installed), every harness with its start code is also compiled for RISC-V against the real gemmini.h.
#include "agents/isa_filter.h"
#include "agents/prompt_builder.h"
#include "eval/evaluator.h"
#include "model/candidate.h"
#include "model/repository.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
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
    struct Outcome {
        int exitCode = -1;
        QByteArray out;
        QByteArray err;
    };

    static Outcome run(const QString &program, const QStringList &args, const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
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
        return "exit " + QByteArray::number(o.exitCode) + "\nstdout:\n" + o.out.left(4000) + "\nstderr:\n" + o.err.right(3000);
    }

    static QString shipped() { return qEnvironmentVariable("AUTOCOMP_DATA_DIR"); }
    static QString tool(const QString &target, const QString &name) { return shipped() + u"/backends/"_s + target + u"/tools/"_s + name; }
    static QString fixture(const QString &name) { return qEnvironmentVariable("AUTOCOMP_TEST_DATA") + u"/integration/data/accel/"_s + name; }

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
        Outcome paste = run(u"python3"_s, {tool(u"gemmini"_s, u"gemmini_paste.py"_s), u"--harness"_s, harness, u"--shape"_s,
                                           benchShape(u"gemmini"_s, problem), u"--key"_s, key, u"--out-dir"_s, build});
        if (paste.exitCode != 0)
            return paste;
        Outcome cc = run(u"cc"_s, {u"-O1"_s, u"-std=gnu99"_s, u"-Wall"_s, u"-Werror"_s, u"-DAUTOCOMP_GEMMINI_HOST"_s, u"-I"_s + build,
                                   u"-I"_s + shipped() + u"/backends/gemmini/include"_s, u"-I"_s + shipped() + u"/sols/gemmini/"_s + problem,
                                   u"-o"_s, build + u"/host"_s, harness});
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
                out += "Generated implementation latency: " + n + " cycles\nGenerated implementation instructions: " + n + "\n";
            }
            if (!line.isEmpty())
                out += line + '\n';
        }
        return out;
    }

    Outcome judgeReport(const QString &problem, const QString &key, const QString &spikeLog)
    {
        const QString judgedir = m_dir.filePath(u"judge-"_s + QFileInfo(spikeLog).baseName());
        QDir().mkpath(judgedir);
        return run(u"python3"_s, {tool(u"gemmini"_s, u"gemmini_judge.py"_s), u"report"_s, u"--harness"_s,
                                  shipped() + u"/sols/gemmini/"_s + problem + u"/harness.c"_s, u"--problem-dir"_s,
                                  shipped() + u"/sols/gemmini/"_s + problem, u"--include"_s, shipped() + u"/backends/gemmini/include"_s,
                                  u"--shape"_s, benchShape(u"gemmini"_s, problem), u"--key"_s, key, u"--cc"_s, u"cc"_s, u"--spike-log"_s, spikeLog,
                                  u"--firesim-log"_s, judgedir + u"/uartlog"_s, u"--build-dir"_s, judgedir + u"/host"_s, u"--result"_s,
                                  judgedir + u"/result.json"_s});
    }

    QJsonObject lastResult(const QString &spikeLog)
    {
        return QJsonDocument::fromJson(readAll(m_dir.filePath(u"judge-"_s + QFileInfo(spikeLog).baseName() + u"/result.json"_s))).object();
    }

    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const QString cli = qEnvironmentVariable("AUTOCOMP_CLI");
        QVERIFY2(!cli.isEmpty() && QFileInfo(cli).isExecutable(), "AUTOCOMP_CLI must name the built autocomp binary");
        QVERIFY2(!QStandardPaths::findExecutable(u"python3"_s).isEmpty(), "the packs' trusted tools are Python 3 scripts");
        QVERIFY2(!QStandardPaths::findExecutable(u"cc"_s).isEmpty(), "the gemmini judge builds its host harness with cc");
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
        QTest::newRow("trainium") << u"trainium"_s << u"matmul"_s << u"sols/trainium/matmul/start.py"_s << u"neuronx-cc, neuron-profile"_s
                                  << u"Neuron SDK"_s;
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
        const QRegularExpression entry(u"(^|\\n)"_s + target + u"  absent .*\\n    missing: ([^\\n]*)\\n    needs: ([^\\n]*)"_s);
        const auto m = entry.match(listing);
        QVERIFY2(m.hasMatch(), qPrintable(listing));
        QVERIFY2(m.captured(2).contains(missing), qPrintable(m.captured(2)));
        QVERIFY2(m.captured(3).contains(needs), qPrintable(m.captured(3)));

        const Outcome eval = run(qEnvironmentVariable("AUTOCOMP_CLI"),
                                 {u"eval"_s, u"--target"_s, target, u"--problem"_s, problem, u"--code"_s, shipped() + u'/' + code}, env);
        QCOMPARE(eval.exitCode, 1);
        QVERIFY2(eval.err.contains(QByteArray("target '" + target.toUtf8() + "' is absent on this machine: " + missing.toUtf8() + " not found on PATH")),
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
        QTest::newRow("gemmini: no RISC-V compiler") << u"gemmini"_s << QStringList{u"spike"_s}
                                                     << u"the RISC-V compiler 'autocomp-no-such-riscv-gcc' is not on PATH (setting toolchain)"_s;
        // spike is a setting (a name on PATH, or a path: AUTOCOMP_GEMMINI_SPIKE), checked by the probe.
        QTest::newRow("gemmini: no spike") << u"gemmini"_s << QStringList{u"autocomp-no-such-riscv-gcc"_s}
                                           << u"spike 'spike' is not found (setting spike, AUTOCOMP_GEMMINI_SPIKE=/path/to/spike)"_s;
        QTest::newRow("trainium: no NKI in python3") << u"trainium"_s << QStringList{u"neuronx-cc"_s, u"neuron-profile"_s}
                                                     << u"python3 cannot import the NKI modules of the Neuron SDK (neuronx-cc) and NumPy"_s;
    }

    void probesNameWhatIsMissing()
    {
        QFETCH(QString, target);
        QFETCH(QStringList, standIns);
        QFETCH(QString, reason);
        // The stand-ins come first on the usual PATH (python3 may be a wrapper that needs the rest of it).
        const QString path = m_dir.filePath(u"probe-path-"_s + QString::fromLatin1(QTest::currentDataTag()).replace(QRegularExpression(u"[^A-Za-z0-9]"_s), u"-"_s));
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
        QVERIFY2(QRegularExpression(u"(^|\\n)"_s + target + u"  absent .*\\n    absent: [^\\n]*"_s + QRegularExpression::escape(reason))
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
        QTest::newRow("gemmini") << u"gemmini"_s << u"cycles"_s << QStringList{u"lint"_s, u"firesim"_s, u"report"_s} << QStringList{};
        QTest::newRow("trainium") << u"trainium"_s << u"latency_ms"_s << QStringList{u"static"_s, u"check"_s, u"profile"_s}
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
                        QVERIFY2(known.contains(name) || name.startsWith(u"env:"_s),
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
        QTest::newRow("trainium") << u"trainium"_s << u"rmsnorm"_s << u"nisa.nc_matmul(stationary, moving)"_s << u"```python"_s;
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
        const QString code = PromptBuilder::codePrompt(*agent, *p, *t, parent.code, u"Hoist the configuration out of the loops."_s);
        QVERIFY(code.contains(isaEntry) && code.contains(agent->rulesCoding.constFirst()));
        QVERIFY2(agent->rulesCoding.join(u' ').contains(fence), "the coding rules name the fence the response parser extracts");
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

        QTest::newRow("summary-json: total_time s -> ms") << u"trainium"_s << u"nki_judge.py"_s << u"parse-profile"_s << u"profile_summary.json"_s << 0
                                                          << u"\"latency_ms\": 0.482113"_s;
        QTest::newRow("summary-json without total_time") << u"trainium"_s << u"nki_judge.py"_s << u"parse-profile"_s << u"profile_summary_no_total.json"_s
                                                         << 1 << u"line 2: 'candidate' has no field 'total_time'"_s;
        QTest::newRow("summary-json cut short") << u"trainium"_s << u"nki_judge.py"_s << u"parse-profile"_s << u"profile_summary_truncated.json"_s << 1
                                                << u"summary-json line 2: not JSON"_s;
        QTest::newRow("nki.benchmark: the last P99 line") << u"trainium"_s << u"nki_judge.py"_s << u"parse-benchmark"_s << u"benchmark.log"_s << 0
                                                          << u"\"latency_ms\": 0.503"_s;
        QTest::newRow("nki.benchmark: malformed") << u"trainium"_s << u"nki_judge.py"_s << u"parse-benchmark"_s << u"benchmark_bad.log"_s << 1
                                                  << u"benchmark line 2: malformed latency (want 'Latency: <ms> ms (P99)')"_s;
        QTest::newRow("spike: a correct run") << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-spike"_s << u"spike_ok.log"_s << 0
                                              << u"\"latencies\": [118204, 96113, 96087, 96090, 96087]"_s;
        QTest::newRow("spike: the harness's own failure") << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-spike"_s << u"spike_incorrect.log"_s << 0
                                                          << u"\"failures\": [\"repeat 1: C[3][14] = 127, expected -5\"]"_s;
        QTest::newRow("spike: a malformed latency") << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-spike"_s << u"spike_bad_latency.log"_s << 1
                                                    << u"line 12: malformed latency"_s;
        QTest::newRow("spike: a cut checksum") << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-spike"_s << u"spike_bad_checksum.log"_s << 1
                                               << u"line 14: malformed checksum"_s;
        QTest::newRow("spike: no verdict") << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-spike"_s << u"spike_no_verdict.log"_s << 1
                                           << u"neither 'Correct result' nor 'Incorrect result'"_s;
        QTest::newRow("uartlog: the last latency") << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-firesim"_s << u"firesim_uartlog"_s << 0
                                                   << u"\"latency_cycles\": 41877"_s;
        QTest::newRow("uartlog: malformed") << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-firesim"_s << u"firesim_uartlog_bad"_s << 1
                                            << u"uartlog line 3: malformed latency"_s;
        QTest::newRow("uartlog: none") << u"gemmini"_s << u"gemmini_judge.py"_s << u"parse-firesim"_s << u"firesim_uartlog_none"_s << 1
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
        const Outcome o = run(u"python3"_s, {TestAccelPacks::tool(target, tool), command, TestAccelPacks::fixture(fixture)});
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
        QTest::newRow("gemmini: printf") << u"gemmini"_s << mm << start << u"static void f(void) { printf(\"Correct result\\n\"); }\nvoid solution("_s
                                         << u"candidate.c:2: 'printf': prints, exits or jumps"_s;
        QTest::newRow("gemmini: a counter") << u"gemmini"_s << mm << start << u"static unsigned long t(void) { return read_cycles(); }\nvoid solution("_s
                                            << u"'read_cycles': reads a counter or CSR"_s;
        QTest::newRow("gemmini: inline asm") << u"gemmini"_s << mm << start << u"static void f(void) { __asm__ volatile(\"nop\"); }\nvoid solution("_s
                                             << u"'__asm__': inline assembly"_s;
        QTest::newRow("gemmini: an include") << u"gemmini"_s << mm << start << u"#include <stdlib.h>\nvoid solution("_s << u"'#include'"_s;
        QTest::newRow("gemmini: the reference") << u"gemmini"_s << mm << u"tiled_matmul_auto("_s << u"matmul_tiled_reference(M, N, K, 0, 0, 0, 4); ("_s
                                                << u"'matmul_tiled_reference': uses the harness's own checking code"_s;
        QTest::newRow("gemmini: no solution") << u"gemmini"_s << mm << start << u"void kernel("_s << u"no 'void solution(...)' definition"_s;
        QTest::newRow("gemmini: markers in a comment are text") << u"gemmini"_s << mm << start << u"/* read_cycles() in a comment */ void solution("_s
                                                                << QString();
        const QString va = u"vector_add"_s;
        QTest::newRow("trainium: the start code") << u"trainium"_s << va << QString() << QString() << QString();
        QTest::newRow("trainium: import os") << u"trainium"_s << va << u"from neuronxcc import nki"_s << u"import os\nfrom neuronxcc import nki"_s
                                             << u"candidate.py:1: import of 'os'"_s;
        QTest::newRow("trainium: try/except") << u"trainium"_s << va << u"    rows, cols = a_input.shape"_s
                                              << u"    try:\n        rows, cols = a_input.shape\n    except ValueError:\n        rows, cols = 1, 1"_s
                                              << u"try/except: a kernel that fails must fail visibly"_s;
        QTest::newRow("trainium: not jit") << u"trainium"_s << va << u"@nki.jit\n"_s << QString() << u"'solution' is not decorated with @nki.jit"_s;
        QTest::newRow("trainium: runs itself") << u"trainium"_s << va << u"    return c_output"_s << u"    nki.benchmark(solution)\n    return c_output"_s
                                               << u"'.benchmark': the judge runs, times and profiles the kernel"_s;
        QTest::newRow("trainium: module-level code") << u"trainium"_s << va << u"import neuronxcc.nki.language as nl"_s
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
        const QString candidate = m_dir.filePath(u"static-"_s + QString::number(qHash(code)) + (target == u"gemmini"_s ? u".c"_s : u".py"_s));
        QVERIFY(writeFile(candidate, code.toUtf8()));
        const QString result = candidate + u".result.json"_s;
        const Outcome o = target == u"gemmini"_s
                              ? run(u"python3"_s, {tool(target, u"gemmini_judge.py"_s), u"lint"_s, u"--candidate"_s, candidate, u"--result"_s, result})
                              : run(u"python3"_s, {tool(target, u"nki_judge.py"_s), u"static"_s, u"--candidate"_s, candidate, u"--entry"_s,
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
        const Outcome o = run(python, {fixture(u"check_nki_judge.py"_s), shipped(), problem, p->shapeArgument(p->benchShape),
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
        const Outcome o = run(u"python3"_s, {tool(u"gemmini"_s, u"gemmini_paste.py"_s), u"--harness"_s, harness, u"--candidate"_s, candidate,
                                             u"--shape"_s, u"M=128,N=128,K=256"_s, u"--key"_s, u"abc123"_s, u"--out-dir"_s, out});
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        const QByteArray pasted = readAll(out + u"/test.c"_s);
        const QByteArray header = readAll(out + u"/autocomp_shape.h"_s);
        QVERIFY(header.contains("#define M 128") && header.contains("#define K 256") && header.contains("#define AUTOCOMP_KEY \"abc123\""));
        const qsizetype begin = pasted.indexOf("// SUBSTITUTE HERE"), end = pasted.indexOf("// SUBSTITUTE END");
        QVERIFY(begin >= 0 && end > begin);
        const QByteArray between = pasted.mid(begin, end - begin);
        QVERIFY(between.contains("#line 1 \"candidate.c\"") && between.contains(readAll(candidate).trimmed()));
        // After the candidate, the harness's own numbering resumes at the END marker's line.
        const QByteArray original = readAll(harness);
        const int endLine = int(original.left(original.indexOf("// SUBSTITUTE END")).count('\n')) + 1;
        QVERIFY2(between.contains(QByteArray("#line " + QByteArray::number(endLine) + " \"harness.c\"")), between.constData());
        QCOMPARE(pasted.mid(end), original.mid(original.indexOf("// SUBSTITUTE END")));

        QVERIFY(writeFile(m_dir.filePath(u"no-markers.c"_s), "int main(void) { return 0; }\n"));
        const Outcome bad = run(u"python3"_s, {tool(u"gemmini"_s, u"gemmini_paste.py"_s), u"--harness"_s, m_dir.filePath(u"no-markers.c"_s),
                                               u"--candidate"_s, candidate, u"--shape"_s, u"M=1"_s, u"--key"_s, u"k"_s, u"--out-dir"_s, out});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("no-markers.c: needs '// SUBSTITUTE HERE' followed by '// SUBSTITUTE END'"), describe(bad).constData());
        const Outcome badShape = run(u"python3"_s, {tool(u"gemmini"_s, u"gemmini_paste.py"_s), u"--harness"_s, harness, u"--shape"_s, u"M=12x"_s,
                                                    u"--key"_s, u"k"_s, u"--out-dir"_s, out});
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
        QVERIFY(a.out.startsWith(QByteArray("autocomp-gemmini: " + problem.toUtf8() + " " + benchShape(u"gemmini"_s, problem).toUtf8() + " key=key1 repeats=5\n")));
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
        QCOMPARE(metrics.value(u"cycles"_s).toInt(), 51996); // the last repeat, as Autocomp reads it
        QCOMPARE(metrics.value(u"spike_instructions"_s).toInt(), 51996);
        QVERIFY(!metrics.contains(u"firesim_cycles"_s));
        const QString feedback = r.value(u"feedback"_s).toVariant().toStringList().join(u'\n');
        // 200 x 64 x 192 MACs; operands 200*192 + 192*64 + 4*64 + 200*64 bytes.
        QVERIFY2(feedback.contains(u"2457600 int8 MACs"_s) && feedback.contains(u"scratchpad 256 KB"_s) && feedback.contains(u"accumulator 64 KB"_s),
                 qPrintable(feedback));

        // FireSim's cycles, where its uartlog is there, become the score.
        QVERIFY(writeFile(m_dir.filePath(u"judge-spike-ok/uartlog"_s), readAll(fixture(u"firesim_uartlog"_s))));
        o = judgeReport(problem, key, ok);
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        r = lastResult(ok);
        QCOMPARE(r.value(u"metrics"_s).toObject().value(u"cycles"_s).toInt(), 41877);
        QCOMPARE(r.value(u"metrics"_s).toObject().value(u"spike_cycles"_s).toInt(), 51996);

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
        QVERIFY2(r.value(u"log"_s).toString().contains(u"repeat 2: the output's checksum"_s), qPrintable(r.value(u"log"_s).toString()));

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

    // Where a gemmini-rocc-tests checkout is available, each harness with its start code compiles for
    // RISC-V against the real gemmini.h (the compile step's flags, without the bare-metal link).
    void gemminiHarnessesCompileForRiscv_data()
    {
        gemminiHarnessesRunOnTheHost_data();
    }

    void gemminiHarnessesCompileForRiscv()
    {
        QFETCH(QString, problem);
        const QString rocc = qEnvironmentVariable("AUTOCOMP_GEMMINI_ROCC_TESTS");
        if (rocc.isEmpty() || !QFileInfo::exists(rocc + u"/include/gemmini.h"_s))
            QSKIP("set AUTOCOMP_GEMMINI_ROCC_TESTS to a gemmini-rocc-tests checkout (with its rocc-software submodule) to compile the harnesses for RISC-V");
        const QString gcc = QStandardPaths::findExecutable(u"riscv64-linux-gnu-gcc"_s);
        if (gcc.isEmpty())
            QSKIP("riscv64-linux-gnu-gcc is not installed");
        const QString dir = shipped() + u"/sols/gemmini/"_s + problem;
        const QString build = m_dir.filePath(u"riscv-"_s + problem);
        const auto p = Repository(QStringList{shipped()}).problem(u"gemmini"_s, problem, nullptr);
        QVERIFY(p);
        Outcome o = run(u"python3"_s, {tool(u"gemmini"_s, u"gemmini_paste.py"_s), u"--harness"_s, dir + u"/harness.c"_s, u"--candidate"_s,
                                       p->startFile, u"--shape"_s, benchShape(u"gemmini"_s, problem), u"--key"_s, u"k"_s, u"--out-dir"_s, build});
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        o = run(gcc, {u"-DPREALLOCATE=1"_s, u"-DMULTITHREAD=1"_s, u"-mcmodel=medany"_s, u"-std=gnu99"_s, u"-O2"_s, u"-ffast-math"_s, u"-fno-common"_s,
                      u"-fno-builtin-printf"_s, u"-march=rv64gc"_s, u"-I"_s + rocc, u"-I"_s + shipped() + u"/backends/gemmini/include"_s, u"-I"_s + dir,
                      u"-I"_s + build, u"-DBAREMETAL=1"_s, u"-c"_s, u"-o"_s, build + u"/test.o"_s, build + u"/test.c"_s});
        QVERIFY2(o.exitCode == 0, describe(o).constData());
    }
};

QTEST_GUILESS_MAIN(TestAccelPacks)
#include "tst_accel_packs.moc"
