// Parameter studies (`autocomp study`, core/study): the Pareto front on hand-made points; a study file's
// errors at their line and field; --dry-run counts the runs and sends nothing; and a whole study of
// 2 problems × beam_width [1, 2] × 2 seeds against the local LLM server and the fake evaluator (the fake
// target's scripted verdicts), killed with SIGKILL and started again: 8 runs, none repeated, nothing paid
// twice, a CSV of 8 rows and a front that matches the CSV's numbers.
#include "fake_llm_server.h"
#include "store/run_store.h"
#include "study/study_config.h"
#include "study/study_report.h"

#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

using namespace autocomp;

namespace {

// Plans and code for any prompt, each code distinct (a repeated code would be a duplicate, not evaluated)
// and faster than the start (100 ms).
QByteArray script()
{
    QByteArray s = "rules:\n"
                   "  - name: plan\n    match: 'Plan:\\s*$'\n    cycle: true\n    responses:\n"
                   "      - {content: \"Chosen optimization: 1. alpha: tile the loops\\nTile it.\", delay_ms: 20}\n"
                   "      - {content: \"Chosen optimization: 2. beta: vectorize\\nVectorize it.\", delay_ms: 20}\n"
                   "  - name: code\n    match: 'Optimized code:\\s*$'\n    cycle: true\n    responses:\n";
    for (int i = 0; i < 60; ++i)
        s += "      - {content: \"```cpp\\n// fake: status=" + QByteArray(i % 7 == 3 ? "compile_error" : "ok")
            + " latency_ms=" + QByteArray::number(90 - i) + " bench_ms=30 compile_ms=10 variant="
            + QByteArray::number(i) + ";\\nvoid kernel() {}\\n```\\n\", delay_ms: 20}\n";
    return s;
}

// RFC 4180 rows of a CSV without quoted commas (the study's CSV of these numbers has none).
QList<QStringList> readCsv(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QList<QStringList> rows;
    for (const QByteArray &line : file.readAll().split('\n'))
        if (!line.trimmed().isEmpty())
            rows << QString::fromUtf8(line.trimmed()).split(QLatin1Char(','));
    return rows;
}

} // namespace

class TestStudy : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

    QString copyData(const QString &name)
    {
        const QString to = m_dir.filePath(name);
        QFile::remove(to);
        QFile::copy(qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/study/") + name, to);
        return to;
    }

    QProcessEnvironment environment(const test::FakeLlmServer &server)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA"));
        env.insert(QStringLiteral("VLLM_API_BASE"), server.baseUrl().toString() + QStringLiteral("/v1"));
        return env;
    }

    struct Outcome
    {
        bool ended = false; // by itself (not killed)
        int exitCode = -1;
        QString out;
        QString err;
    };

    // Runs the CLI with the server in this process; kills it with SIGKILL once the server has seen `killAt`
    // requests (0: never).
    Outcome runCli(const QStringList &args, test::FakeLlmServer &server, int killAt = 0)
    {
        QProcess process;
        process.setProcessEnvironment(environment(server));
        QSignalSpy finished(&process, &QProcess::finished);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"), args);
        Outcome o;
        if (!process.waitForStarted())
            return o;
        QElapsedTimer clock;
        clock.start();
        while (finished.isEmpty() && clock.elapsed() < 400000) {
            if (killAt > 0 && server.requestCount() >= killAt) {
                ::kill(pid_t(process.processId()), SIGKILL);
                finished.wait(10000);
                o.out = QString::fromUtf8(process.readAllStandardOutput());
                o.err = QString::fromUtf8(process.readAllStandardError());
                return o;
            }
            finished.wait(20);
        }
        o.out = QString::fromUtf8(process.readAllStandardOutput());
        o.err = QString::fromUtf8(process.readAllStandardError());
        o.ended = !finished.isEmpty() && process.exitStatus() == QProcess::NormalExit;
        o.exitCode = process.exitCode();
        return o;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void paretoFrontOfHandMadePoints()
    {
        // quality (lower better), cost (lower better)
        const QList<ParetoPoint> points{
            {10, 5}, // 0: front (cheapest of the good ones)
            {8, 9}, // 1: front
            {12, 9}, // 2: dominated by 0 and 1
            {10, 7}, // 3: dominated by 0 (same quality, dearer)
            {7, 20}, // 4: front (the best quality)
            {std::nan(""), 1}, // 5: no score: never on it, dominates nothing
            {15, 4}, // 6: front (the cheapest)
            {8, 9}, // 7: equal to 1: both on it
        };
        QCOMPARE(StudyReport::paretoFront(points), (QList<int>{0, 1, 4, 6, 7}));
        QCOMPARE(StudyReport::paretoFront({}), QList<int>{});
        QCOMPARE(StudyReport::paretoFront({{3, 3}}), QList<int>{0});
    }

    void labelsRoundTrip()
    {
        const StudyPoint point{{{QStringLiteral("beam_width"), QStringLiteral("4")},
                                {QStringLiteral("plans_per_parent"), QStringLiteral("2")}}};
        const QString label = StudyLabel::format(QStringLiteral("beam"), QStringLiteral("cpu/gemm"), point, 1112);
        QCOMPARE(label, QStringLiteral("study:beam problem=cpu/gemm beam_width=4 plans_per_parent=2 seed=1112"));
        const auto parsed = StudyLabel::parse(label);
        QVERIFY(parsed);
        QCOMPARE(parsed->study, QStringLiteral("beam"));
        QCOMPARE(parsed->problem, QStringLiteral("cpu/gemm"));
        QVERIFY(parsed->point() == point);
        QCOMPARE(parsed->seed, quint64(1112));
        QVERIFY(!StudyLabel::parse(QStringLiteral("example run recorded with scripted responses")));
        QVERIFY(!StudyLabel::parse(QStringLiteral("study:x problem=a/b beam_width=1")));
    }

    void gridOfTwoSettings()
    {
        const QString base = copyData(QStringLiteral("run.yaml"));
        QStringList errors;
        const auto study = StudyConfig::fromYaml(
            "base: run.yaml\nproblems: [fake/kernel]\nvary:\n  beam_width: [1, 3]\n  plans_per_parent: [2, 4, 6]\n"
            "seeds: [7, 9]\n",
            m_dir.filePath(QStringLiteral("grid.yaml")), &errors);
        QVERIFY2(study, qPrintable(errors.join(QLatin1Char('\n'))));
        QCOMPARE(study->name, QStringLiteral("grid"));
        QCOMPARE(study->points().size(), 6);
        QCOMPARE(study->runs.size(), 12);
        const StudyRun &last = study->runs.last();
        QCOMPARE(last.point.name(), QStringLiteral("beam_width=3,plans_per_parent=6"));
        QCOMPARE(last.config.search.beamWidth, 3);
        QCOMPARE(last.config.search.plansPerParent, 6);
        QCOMPARE(last.config.search.seed, quint64(9));
        // The rest of the base is kept.
        QCOMPARE(last.config.search.iterations, 2);
        QCOMPARE(last.config.planModels, QStringList{QStringLiteral("vllm::m")});
        QVERIFY(last.configYaml.contains("beam_width: 3"));
        // Other sections by a dotted key.
        const auto budget = StudyConfig::fromYaml(
            "base: run.yaml\nproblems: [fake/kernel]\nvary: {budget.max_llm_calls: [5, 10]}\n",
            m_dir.filePath(QStringLiteral("budget.yaml")), &errors);
        QVERIFY2(budget, qPrintable(errors.join(QLatin1Char('\n'))));
        QCOMPARE(budget->runs.size(), 2);
        QCOMPARE(budget->runs.at(1).config.budget.maxLlmCalls.value_or(0), qint64(10));
        QCOMPARE(budget->runs.at(1).config.search.seed, quint64(5)); // seeds: 1 by default, the base's seed
        QVERIFY(!base.isEmpty());
    }

    void errorsNameTheLineAndTheField_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown key") << QByteArray(
            "base: run.yaml\nproblems: [fake/kernel]\nvary: {beam_width: [1]}\nseed: 2\n")
                                     << QStringLiteral("bad.yaml:4: unknown key 'seed'");
        QTest::newRow("refused value") << QByteArray(
            "base: run.yaml\nproblems: [fake/kernel]\nvary:\n  beam_width:\n    - 2\n    - 0\n")
                                       << QStringLiteral("bad.yaml:6: 'vary.beam_width = 0' is refused by the run "
                                                         "configuration: 'search.beam_width' must be at least 1");
        QTest::newRow("unknown search key")
            << QByteArray("base: run.yaml\nproblems: [fake/kernel]\nvary: {beam_wdith: [1, 2]}\n")
            << QStringLiteral("bad.yaml:3: 'vary.beam_wdith = 1' is refused by the run configuration: unknown key "
                              "'search.beam_wdith'");
        QTest::newRow("bad problem") << QByteArray(
            "base: run.yaml\nproblems: [fake/kernel, gemm]\nvary: {beam_width: [1]}\n")
                                     << QStringLiteral("bad.yaml:2: 'problems': 'gemm' is not target/problem");
        QTest::newRow("three settings") << QByteArray(
            "base: run.yaml\nproblems: [fake/kernel]\nvary: {beam_width: [1], iterations: [1], fix_attempts: [0]}\n")
                                        << QStringLiteral("bad.yaml:3: 'vary' must map one or two settings");
        QTest::newRow("no seeds") << QByteArray(
            "base: run.yaml\nproblems: [fake/kernel]\nvary: {beam_width: [1]}\nseeds: 0\n")
                                  << QStringLiteral("bad.yaml:4: 'seeds' must be between 1 and 1000, got 0");
        QTest::newRow("missing base") << QByteArray(
            "base: nothing.yaml\nproblems: [fake/kernel]\nvary: {beam_width: [1]}\n")
                                      << QStringLiteral("bad.yaml:1: 'base': cannot read");
        QTest::newRow("seed varied") << QByteArray("base: run.yaml\nproblems: [fake/kernel]\nvary: {seed: [1, 2]}\n")
                                     << QStringLiteral("bad.yaml:3: 'vary.seed': seeds are set with 'seeds:'");
    }

    void errorsNameTheLineAndTheField()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QString, expected);
        copyData(QStringLiteral("run.yaml"));
        QStringList errors;
        QVERIFY(!StudyConfig::fromYaml(yaml, m_dir.filePath(QStringLiteral("bad.yaml")), &errors));
        const QString all = errors.join(QLatin1Char('\n'));
        QVERIFY2(all.contains(m_dir.filePath(expected)), qPrintable(all));
    }

    void dryRunCountsAndSendsNothing()
    {
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        QVERIFY2(server.loadScriptText(script(), QString(), &error), qPrintable(error));
        copyData(QStringLiteral("run.yaml"));
        const QString study = copyData(QStringLiteral("study.yaml"));
        const QString store = m_dir.filePath(QStringLiteral("dry.sqlite"));
        const Outcome o = runCli(
            {QStringLiteral("study"), study, QStringLiteral("--store"), store, QStringLiteral("--dry-run")}, server);
        QVERIFY2(o.ended && o.exitCode == 0, qPrintable(o.err));
        QVERIFY2(o.out.contains(QStringLiteral("2 problem(s) × 2 point(s) × 2 seed(s) = 8 runs")), qPrintable(o.out));
        // beam_width 1 and 2, N=2, K=1, F=0, 2 iterations: (B·2 + B·2) · 2 calls per run, 2 seeds, 2 problems.
        QVERIFY2(o.out.contains(QStringLiteral("LLM calls: at most %1 ").arg((4 * 2 + 8 * 2) * 2 * 2)),
                 qPrintable(o.out));
        QVERIFY2(o.out.contains(QStringLiteral("not in the price table (counted as $0): vllm::m")), qPrintable(o.out));
        QCOMPARE(server.requestCount(), 0);
        QVERIFY(!QFile::exists(store) || RunStore::open(store, &error)->runs().isEmpty());
    }

    void budgetStoppedRunsHaveEnded()
    {
        // A run its budget stops has ended: the study exits 0 and, started again, does not resume it.
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        QVERIFY2(server.loadScriptText(script(), QString(), &error), qPrintable(error));
        copyData(QStringLiteral("run.yaml"));
        const QString study = m_dir.filePath(QStringLiteral("budget.yaml"));
        QFile file(study);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("base: run.yaml\nproblems: [fake/kernel]\nvary: {budget.max_llm_calls: [2]}\n");
        file.close();
        const QString store = m_dir.filePath(QStringLiteral("budget.sqlite"));
        const QStringList args{QStringLiteral("study"), study, QStringLiteral("--store"), store};
        const Outcome first = runCli(args, server);
        QVERIFY2(first.ended && first.exitCode == 0, qPrintable(first.out + first.err));
        const QList<RunInfo> runs = RunStore::open(store, &error)->runs();
        QCOMPARE(runs.size(), 1);
        QCOMPARE(toString(runs.first().state), QStringLiteral("stopped"));
        QVERIFY2(runs.first().stopReason.startsWith(QLatin1String("budget:")), qPrintable(runs.first().stopReason));
        const int requests = server.requestCount();
        const Outcome again = runCli(args, server);
        QVERIFY2(again.ended && again.exitCode == 0, qPrintable(again.out + again.err));
        QVERIFY2(again.out.contains(QStringLiteral("1 ended before (not run again), 0 to resume, 0 to start")),
                 qPrintable(again.out));
        QCOMPARE(server.requestCount(), requests);
        QVERIFY2(QFile(m_dir.filePath(QStringLiteral("budget.csv"))).exists(), "the CSV beside the study file");
    }

    void killedStudyResumesWithoutPayingTwice()
    {
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        QVERIFY2(server.loadScriptText(script(), QString(), &error), qPrintable(error));
        copyData(QStringLiteral("run.yaml"));
        const QString studyPath = copyData(QStringLiteral("study.yaml"));
        const QString storePath = m_dir.filePath(QStringLiteral("study.sqlite"));
        const QString csv = m_dir.filePath(QStringLiteral("beam.csv"));
        const QStringList args{QStringLiteral("study"), studyPath, QStringLiteral("--store"), storePath,
                               QStringLiteral("--csv"), csv};

        // Killed once a few runs have ended and others are under way (8 runs send about 80 requests).
        Outcome first = runCli(args, server, 36);
        QVERIFY2(!first.ended, "the kill landed before the study ended");
        // Two runs at once (parallel: 2): the first two study lines are starts, before any run ended.
        QStringList studyLines;
        for (const QString &line : first.err.split(QLatin1Char('\n')))
            if (line.contains(QLatin1String(" study: run ")))
                studyLines << line;
        QVERIFY2(studyLines.size() >= 3 && studyLines.at(0).endsWith(QLatin1String(" started"))
                     && studyLines.at(1).endsWith(QLatin1String(" started")),
                 qPrintable(studyLines.join(QLatin1Char('\n'))));
        // What had ended before the kill, as the store has it.
        QHash<qint64, std::pair<qint64, qsizetype>> endedBefore; // run -> calls, candidates
        {
            auto store = RunStore::open(storePath, &error);
            QVERIFY2(store, qPrintable(error));
            for (const RunInfo &run : store->runs())
                if (run.state == RunState::Finished)
                    endedBefore.insert(run.id,
                                       {qint64(store->llmCalls(run.id).size()), store->candidates(run.id).size()});
            QVERIFY2(!endedBefore.isEmpty() && endedBefore.size() < 8, qPrintable(QString::number(endedBefore.size())));
        }
        Outcome again = runCli(args, server);
        for (int attempt = 0; !(again.ended && again.exitCode == 0) && attempt < 2; ++attempt)
            again = runCli(args, server);
        QVERIFY2(again.ended && again.exitCode == 0, qPrintable(again.out + again.err));
        QVERIFY2(again.out.contains(QStringLiteral("%1 ended before (not run again)").arg(endedBefore.size())),
                 qPrintable(again.out));
        // The runs the kill interrupted were resumed (their paid answers reused), not started again.
        const auto resumed = QRegularExpression(QStringLiteral("(\\d+) to resume")).match(again.out);
        QVERIFY2(resumed.hasMatch() && resumed.captured(1).toInt() >= 1, qPrintable(again.out));

        auto store = RunStore::open(storePath, &error);
        QVERIFY2(store, qPrintable(error));
        // Exactly 8 runs, one per problem × point × seed, all finished.
        const QList<RunInfo> runs = store->runs();
        QCOMPARE(runs.size(), 8);
        QSet<QString> labels;
        for (const RunInfo &run : runs) {
            const auto label = StudyLabel::parse(run.label);
            QVERIFY2(label && label->study == QLatin1String("beam"), qPrintable(run.label));
            labels.insert(run.label);
            QCOMPARE(toString(run.state), QStringLiteral("finished"));
            QCOMPARE(run.iteration, 2);
        }
        QCOMPARE(labels.size(), 8);
        // The runs that had ended were not touched again.
        for (auto it = endedBefore.cbegin(); it != endedBefore.cend(); ++it) {
            QCOMPARE(qint64(store->llmCalls(it.key()).size()), it.value().first);
            QCOMPARE(store->candidates(it.key()).size(), it.value().second);
        }
        // Paid once: within a run, a request is answered (status ok) at most once; every request the server
        // saw is a call of the store, answered (ok) or cut off by the kill (unconfirmed, then sent again).
        int ok = 0;
        int unconfirmed = 0;
        for (const RunInfo &run : runs) {
            QHash<QString, int> paid;
            for (const LlmCall &call : store->llmCalls(run.id)) {
                if (call.status == QLatin1String("ok")) {
                    ++ok;
                    QVERIFY2(
                        ++paid[call.requestHash] == 1,
                        qPrintable(QStringLiteral("run %1 paid request %2 twice").arg(run.id).arg(call.requestHash)));
                }
                unconfirmed += call.status == QLatin1String("unconfirmed");
                QVERIFY2(call.status != QLatin1String("error"), qPrintable(call.error));
            }
        }
        qInfo() << "requests:" << server.requestCount() << "answered:" << ok << "cut off by the kill:" << unconfirmed
                << "runs ended before the kill:" << endedBefore.size();
        // A call is recorded before it is sent (it may still wait for a connection when the kill lands), so the
        // requests beyond the answered ones are at most the calls cut off.
        QVERIFY2(server.requestCount() >= ok && server.requestCount() <= ok + unconfirmed,
                 "no request beyond the answered and the cut-off ones");

        // The CSV: a header and 8 rows, one per run; the points CSV's front is the front of its own numbers.
        const QList<QStringList> rows = readCsv(csv);
        QCOMPARE(rows.size(), 1 + 8);
        const QStringList header = rows.first();
        QSet<QString> csvRuns;
        for (const QStringList &row : rows.mid(1)) {
            QCOMPARE(row.size(), header.size());
            QCOMPARE(row.at(header.indexOf(QStringLiteral("state"))), QStringLiteral("finished"));
            csvRuns.insert(row.at(header.indexOf(QStringLiteral("run_id"))));
        }
        QCOMPARE(csvRuns.size(), 8);
        QString pointsPath = csv;
        pointsPath.chop(4);
        const QList<QStringList> points = readCsv(pointsPath + QStringLiteral(".points.csv"));
        QCOMPARE(points.size(), 1 + 4);
        const QStringList ph = points.first();
        const int problem = int(ph.indexOf(QStringLiteral("problem")));
        const int best = int(ph.indexOf(QStringLiteral("mean_best")));
        const int usd = int(ph.indexOf(QStringLiteral("usd")));
        const int tokens = int(ph.indexOf(QStringLiteral("mean_tokens")));
        const int front = int(ph.indexOf(QStringLiteral("on_front")));
        QVERIFY(problem >= 0 && best >= 0 && tokens >= 0 && front >= 0 && usd >= 0);
        int onFront = 0;
        for (const QStringList &p : points.mid(1)) {
            // The local model has no price: cost is tokens. By hand: dominated when another point of the same
            // problem is at least as good in both and better in one.
            QCOMPARE(p.at(usd).toDouble(), 0.0);
            bool dominated = false;
            for (const QStringList &q : points.mid(1)) {
                if (&q == &p || q.at(problem) != p.at(problem))
                    continue;
                const double qb = q.at(best).toDouble(), pb = p.at(best).toDouble();
                const double qc = q.at(tokens).toDouble(), pc = p.at(tokens).toDouble();
                dominated = dominated || (qb <= pb && qc <= pc && (qb < pb || qc < pc));
            }
            QCOMPARE(p.at(front), dominated ? QStringLiteral("no") : QStringLiteral("yes"));
            onFront += !dominated;
        }
        QVERIFY(onFront >= 2); // at least one point per problem
        // And the report the command printed names every point.
        QVERIFY2(again.out.contains(QStringLiteral("beam_width=1"))
                     && again.out.contains(QStringLiteral("beam_width=2")),
                 qPrintable(again.out));

        // Once more: everything has ended, nothing is sent.
        const int before = server.requestCount();
        const Outcome done = runCli(args, server);
        QVERIFY2(done.ended && done.exitCode == 0, qPrintable(done.err));
        QVERIFY2(done.out.contains(QStringLiteral("8 ended before (not run again), 0 to resume, 0 to start")),
                 qPrintable(done.out));
        QCOMPARE(server.requestCount(), before);
        QCOMPARE(RunStore::open(storePath, &error)->runs().size(), 8);
    }
};

QTEST_GUILESS_MAIN(TestStudy)
#include "tst_study.moc"
