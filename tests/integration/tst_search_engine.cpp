// The search engine's rules, one by one, against the local LLM server and the scriptable fake
// evaluator (tests/support/fake_eval_main.cpp): verdicts and latencies are written into the scripted
// code (`// fake: status=ok latency_ms=90;`), so every expectation below is exact.
#include "fake_llm_server.h"
#include "menu_invariants.h"
#include "catalog/repository.h"
#include "search/run_setup.h"
#include "search/search_engine.h"
#include "agents/prompt_builder.h"
#include "insights/menu_insights.h"
#include "store/run_store.h"

#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <numeric>

using namespace autocomp;

namespace {

// A fenced code answer whose evaluation the fake evaluator scripts.
QString code(const QString &directives, const QString &tag = QStringLiteral("cpp"))
{
    return QStringLiteral("Here is the code.\n```%1\n// fake: %2;\nvoid kernel() {}\n```\n").arg(tag, directives);
}

QString yamlString(const QString &text)
{
    QString escaped = text;
    escaped.replace(QLatin1Char('\\'), QStringLiteral("\\\\"))
        .replace(QLatin1Char('"'), QStringLiteral("\\\""))
        .replace(QLatin1Char('\n'), QStringLiteral("\\n"));
    return QLatin1Char('"') + escaped + QLatin1Char('"');
}

struct Rule
{
    QString name;
    QString match;
    QStringList contents;
    bool cycle = false;
    int delayMs = 0;
    bool cutAtLimit = false; // every answer of the rule stops at the output-token limit
    QList<int> delaysMs{}; // per answer, in order (in place of delayMs where given)
};

QByteArray script(const QList<Rule> &rules)
{
    QString out = QStringLiteral("rules:\n");
    for (const Rule &r : rules) {
        out += QStringLiteral("  - name: %1\n    match: '%2'\n    cycle: %3\n    responses:\n")
                   .arg(r.name, r.match, r.cycle ? QStringLiteral("true") : QStringLiteral("false"));
        for (qsizetype i = 0; i < r.contents.size(); ++i)
            out += QStringLiteral("      - content: %1\n        delay_ms: %2\n        cut_at_limit: %3\n")
                       .arg(yamlString(r.contents.at(i)))
                       .arg(r.delaysMs.value(i, r.delayMs))
                       .arg(r.cutAtLimit ? QStringLiteral("true") : QStringLiteral("false"));
    }
    return out.toUtf8();
}

const QString s_plan = QStringLiteral("Chosen optimization: 1. alpha: tile the loops\nTile it.");

} // namespace

class TestSearchEngine : public QObject
{
    Q_OBJECT

    struct Harness
    {
        test::FakeLlmServer server;
        QTemporaryDir dir;
        std::unique_ptr<SearchEngine> engine;
        QString storePath;
    };

    // The agent the harness's runs use, and data directories searched before the fake data (tests that set
    // them put them back).
    QString m_agent = QStringLiteral("fake");
    QStringList m_dataDirs;

    std::unique_ptr<Harness> makeHarness(const QList<Rule> &rules, const QString &search,
                                         const QStringList &models = {QStringLiteral("m1")}, const QString &extra = {},
                                         const QString &target = QStringLiteral("fake"))
    {
        auto h = std::make_unique<Harness>();
        if (!h->server.listen())
            return nullptr;
        QString error;
        if (!h->server.loadScriptText(script(rules), h->dir.path(), &error)) {
            qWarning() << error;
            return nullptr;
        }
        QStringList specs;
        for (const QString &m : models)
            specs << QStringLiteral("\"openai-compatible@%1/v1::%2\"").arg(h->server.baseUrl().toString(), m);
        const QByteArray yaml = QStringLiteral(
                                    "target: %4\nproblem: kernel\nagent: %5\nmodels: {plan: [%1]}\nsearch: {%2}\n%3")
                                    .arg(specs.join(QLatin1String(", ")), search, extra, target, m_agent)
                                    .toUtf8();
        QStringList errors;
        const auto config = RunConfig::fromYaml(yaml, QStringLiteral("test.yaml"), &errors);
        if (!config) {
            qWarning() << errors;
            return nullptr;
        }
        h->storePath = h->dir.filePath(QStringLiteral("runs.sqlite"));
        const auto setup = prepareRun(*config, yaml,
                                      Repository(m_dataDirs + QStringList{qEnvironmentVariable("AUTOCOMP_FAKE_DATA")}),
                                      h->storePath, &errors);
        if (!setup) {
            qWarning() << errors;
            return nullptr;
        }
        h->engine = std::make_unique<SearchEngine>(*setup);
        return h;
    }

    RunInfo runToEnd(Harness &h)
    {
        QSignalSpy finished(h.engine.get(), &SearchEngine::finished);
        QString error;
        if (!h.engine->start(&error)) {
            qWarning() << error;
            return {};
        }
        if (!finished.wait(120000))
            return {};
        // Every run the tests make: its menu insights add up.
        if (auto store = RunStore::open(h.storePath, &error)) {
            const QStringList violations = test::menuInsightViolations(*store);
            if (!violations.isEmpty())
                QTest::qFail(qPrintable(violations.join(QLatin1Char('\n'))), __FILE__, __LINE__);
        } else {
            QTest::qFail(qPrintable(error), __FILE__, __LINE__);
        }
        return finished.first().first().value<RunInfo>();
    }

    static QStringList planPromptsOf(Harness &h)
    {
        QStringList prompts;
        for (const auto &r : h.server.requests())
            if (r.ruleName == QLatin1String("plan"))
                prompts << r.lastUserMessage;
        return prompts;
    }

    QList<Candidate> candidates(Harness &h)
    {
        QString error;
        auto store = RunStore::open(h.storePath, &error);
        return store ? store->candidates(h.engine->runId()) : QList<Candidate>{};
    }

private Q_SLOTS:
    void initTestCase()
    {
        qRegisterMetaType<RunInfo>();
        qRegisterMetaType<Candidate>();
        QVERIFY(!qEnvironmentVariable("AUTOCOMP_FAKE_EVAL").isEmpty());
    }

    void dropoutDistribution_data()
    {
        QTest::addColumn<double>("dropout");
        QTest::addColumn<double>("expectedKept");
        QTest::newRow("paper default 0.75") << 0.75 << 2.0;
        QTest::newRow("first release 0.3") << 0.3 << 5.6;
        QTest::newRow("no dropout") << 0.0 << 8.0;
        QTest::newRow("drop everything") << 1.0 << 1.0; // never empty
    }
    void dropoutDistribution()
    {
        QFETCH(double, dropout);
        QFETCH(double, expectedKept);
        std::mt19937_64 rng(1111);
        const int draws = 20000;
        double total = 0;
        int empty = 0;
        QList<int> perItem(8, 0);
        for (int i = 0; i < draws; ++i) {
            const QList<int> kept = SearchEngine::dropoutDraw(8, dropout, rng);
            empty += kept.isEmpty();
            total += kept.size();
            for (int k : kept)
                ++perItem[k];
        }
        QCOMPARE(empty, 0);
        QVERIFY2(qAbs(total / draws - expectedKept) < 0.1, qPrintable(QString::number(total / draws)));
        // No item is favoured.
        const auto [lo, hi] = std::minmax_element(perItem.begin(), perItem.end());
        QVERIFY(*hi - *lo < draws / 20);
        // Seeded: the same seed gives the same draws.
        std::mt19937_64 a(7), b(7);
        QCOMPARE(SearchEngine::dropoutDraw(8, dropout, a), SearchEngine::dropoutDraw(8, dropout, b));
    }

    void ensembleSplitGivesEveryModelWork()
    {
        // 4 models, one parent, N=2 plans, K=2 code samples: 2 plans but every model must still write code.
        auto h = makeHarness({{QStringLiteral("code"),
                               QStringLiteral("Optimized code:\\s*$"),
                               {code(QStringLiteral("latency_ms=90"))},
                               true},
                              {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true}},
                             QStringLiteral("iterations: 1, beam_width: 2, plans_per_parent: 2, code_per_plan: 2"),
                             {QStringLiteral("m1"), QStringLiteral("m2"), QStringLiteral("m3"), QStringLiteral("m4")});
        QVERIFY(h);
        QCOMPARE(toString(runToEnd(*h).state), QStringLiteral("finished"));
        QHash<QString, int> planModels, codeModels;
        for (const auto &r : h->server.requests())
            (r.ruleName == QLatin1String("plan") ? planModels : codeModels)[r.model]++;
        QCOMPARE(planModels.size(), 2);
        QCOMPARE(codeModels.size(), 4);
        for (int n : std::as_const(codeModels))
            QCOMPARE(n, 1);
    }

    void gateSlackAndDedup()
    {
        // Root: 100 ms. Children: 95 (faster), 105 (within slack 1.1), 115 (too slow), a compile error,
        // an incorrect one, and a duplicate of the 95 ms code.
        const QStringList codes{
            code(QStringLiteral("latency_ms=95")),
            code(QStringLiteral("latency_ms=105")),
            code(QStringLiteral("latency_ms=115")),
            code(QStringLiteral("status=compile_error")),
            code(QStringLiteral("status=incorrect")),
            QStringLiteral("Same again.\n```cpp\n//   fake: latency_ms=95;\nvoid   kernel() {}\n```\n")};
        QStringList plans;
        for (int i = 0; i < 6; ++i)
            plans << QStringLiteral("Chosen optimization: %1. x\nplan number %1").arg(i + 1);
        auto h = makeHarness(
            {{QStringLiteral("code"), QStringLiteral("Optimized code:\\s*$"), codes},
             {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), plans}},
            QStringLiteral("iterations: 1, beam_width: 4, plans_per_parent: 6, code_per_plan: 1, fix_attempts: 0"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        QCOMPARE(toString(run.state), QStringLiteral("finished"));
        int failed = 0;
        for (const Candidate &c : candidates(*h)) {
            if (!c.hasScore())
                ++failed;
            if (!c.hasScore())
                QVERIFY2(!c.inBeam, "a failed candidate never enters the beam");
        }
        QCOMPARE(failed, 3);
        // The code that is the same as the 95 ms one (whitespace aside) is not evaluated again.
        int duplicates = 0;
        for (const Candidate &c : candidates(*h)) {
            if (c.status != CandidateStatus::Duplicate)
                continue;
            ++duplicates;
            const Candidate original = h->engine->candidate(
                c.metrics.value(QStringLiteral("duplicate_of")).toInteger());
            QCOMPARE(toString(original.status), QStringLiteral("correct"));
            QCOMPARE(original.score, 95.0);
            QVERIFY(c.error.startsWith(QStringLiteral("duplicate of #%1").arg(original.id)));
        }
        QCOMPARE(duplicates, 1);
        QList<double> beamScores;
        for (qint64 id : h->engine->beam())
            beamScores << h->engine->candidate(id).score;
        // 95 first; the root keeps its place; 105 passes with slack; 115 is rejected; the duplicate 95 is pruned.
        QCOMPARE(beamScores, (QList<double>{95, 100, 105}));
        QCOMPARE(run.bestScore, 95.0);
    }

    // The LLM returns its parent's code unchanged (only the layout differs): nothing is evaluated again,
    // the copy is a duplicate of the root and the best stays the root.
    void unchangedCodeIsADuplicate()
    {
        const QStringList codes{
            QStringLiteral("Unchanged.\n```cpp\n// fake: status=ok latency_ms=100\nvoid kernel()  {\n}\n```\n")};
        auto h = makeHarness(
            {{QStringLiteral("code"), QStringLiteral("Optimized code:\\s*$"), codes},
             {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}}},
            QStringLiteral("iterations: 1, beam_width: 2, plans_per_parent: 1, code_per_plan: 1, fix_attempts: 0"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        QCOMPARE(toString(run.state), QStringLiteral("finished"));
        const QList<Candidate> all = candidates(*h);
        QCOMPARE(all.size(), 2);
        const Candidate root = all.at(0).origin == CandidateOrigin::Root ? all.at(0) : all.at(1);
        const Candidate copy = all.at(0).origin == CandidateOrigin::Root ? all.at(1) : all.at(0);
        QCOMPARE(toString(copy.status), QStringLiteral("duplicate"));
        QCOMPARE(statusWord(copy), QStringLiteral("duplicate"));
        QCOMPARE(copy.metrics.value(QStringLiteral("duplicate_of")).toInteger(), root.id);
        QVERIFY(!copy.hasScore());
        QVERIFY(!copy.inBeam);
        QString error;
        auto store = RunStore::open(h->storePath, &error);
        QVERIFY2(store, qPrintable(error));
        QVERIFY(!store->evaluationSteps(root.id).isEmpty());
        QVERIFY2(store->evaluationSteps(copy.id).isEmpty(), "the copy is not evaluated");
        QCOMPARE(run.bestCandidateId, root.id);
        QCOMPARE(h->engine->beam(), QList<qint64>{root.id});
    }

    // Two candidates whose paired-timing intervals overlap cannot be told apart: the later one, although
    // its point estimate is lower, is no improvement on its parent and does not become the run's best.
    void withinNoiseTheEarlierStaysBest()
    {
        const QStringList codes{code(QStringLiteral("latency_ms=80 paired_ratio=0.80 ci_low=0.78 ci_high=0.82")),
                                code(QStringLiteral("latency_ms=79 paired_ratio=0.79 ci_low=0.77 ci_high=0.81"))};
        auto h = makeHarness({{QStringLiteral("code"), QStringLiteral("Optimized code:\\s*$"), codes},
                              {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true}},
                             QStringLiteral("iterations: 2, beam_width: 1, plans_per_parent: 1, code_per_plan: 1, "
                                            "fix_attempts: 0, parent_slack: [1.0]"),
                             {QStringLiteral("m1")}, {}, QStringLiteral("fake-paired"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        QCOMPARE(toString(run.state), QStringLiteral("finished"));
        Candidate first;
        Candidate second;
        for (const Candidate &c : candidates(*h)) {
            if (c.iteration == 1)
                first = c;
            if (c.iteration == 2)
                second = c;
        }
        QCOMPARE(toString(first.status), QStringLiteral("correct"));
        QCOMPARE(toString(second.status), QStringLiteral("correct"));
        QCOMPARE(second.parentId, first.id);
        QVERIFY(second.score < first.score);
        QVERIFY(withinNoise(first, second));
        QCOMPARE(run.bestCandidateId, first.id);
        QCOMPARE(run.bestScore, first.score);
        QCOMPARE(h->engine->beam(), QList<qint64>{first.id});
    }

    // One evaluation's interval does not see how much separate evaluations of the same code differ. With a
    // noise floor of 4 %, a child 6 % faster than its parent by tight intervals (0.745-0.76 against 0.79-0.81,
    // both ratios to the start) cannot be told from it: the run's best and the beam stay with the parent, and
    // the floor is recorded with the candidates so that every view widens their intervals alike. A child
    // clearly faster still ranks.
    void noiseFloorWidensTheInterval()
    {
        const QStringList codes{code(QStringLiteral("latency_ms=80 paired_ratio=0.80 ci_low=0.79 ci_high=0.81")),
                                code(QStringLiteral("latency_ms=75.2 paired_ratio=0.752 ci_low=0.745 ci_high=0.76")),
                                code(QStringLiteral("latency_ms=55 paired_ratio=0.55 ci_low=0.54 ci_high=0.56"))};
        auto h = makeHarness(
            {{QStringLiteral("code"), QStringLiteral("Optimized code:\\s*$"), codes},
             {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true}},
            QStringLiteral("iterations: 3, beam_width: 1, plans_per_parent: 1, code_per_plan: 1, fix_attempts: 0, "
                           "parent_slack: [1.1], noise_floor: 0.04"),
            {QStringLiteral("m1")}, {}, QStringLiteral("fake-paired"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        QCOMPARE(toString(run.state), QStringLiteral("finished"));
        QHash<int, Candidate> byIteration;
        for (const Candidate &c : candidates(*h))
            if (c.origin != CandidateOrigin::Root)
                byIteration.insert(c.iteration, c);
        QCOMPARE(byIteration.size(), 3);
        const Candidate first = byIteration.value(1), second = byIteration.value(2), third = byIteration.value(3);
        QCOMPARE(second.parentId, first.id);
        QCOMPARE(second.metrics.value(QStringLiteral("noise_floor")).toDouble(), 0.04);
        const auto interval = scoreInterval(second);
        QVERIFY(interval);
        QVERIFY2(qAbs(interval->low - second.score * (0.745 / 0.752) * 0.96) < 1e-9,
                 qPrintable(QString::number(interval->low)));
        QVERIFY2(qAbs(interval->high - second.score * (0.76 / 0.752) * 1.04) < 1e-9,
                 qPrintable(QString::number(interval->high)));
        // Without the floor 0.745-0.76 and 0.79-0.81 would be told apart; with it they overlap.
        QVERIFY(second.score < first.score);
        QVERIFY(withinNoise(first, second));
        QCOMPARE(third.parentId, first.id); // the beam kept the earlier of the two
        QVERIFY(!withinNoise(first, third));
        QCOMPARE(run.bestCandidateId, third.id);
    }

    // The same two measurements with no floor (the target declares none, the run sets none) are told apart.
    void withoutNoiseFloorTightIntervalsRank()
    {
        const QStringList codes{code(QStringLiteral("latency_ms=80 paired_ratio=0.80 ci_low=0.79 ci_high=0.81")),
                                code(QStringLiteral("latency_ms=75.2 paired_ratio=0.752 ci_low=0.745 ci_high=0.76"))};
        auto h = makeHarness({{QStringLiteral("code"), QStringLiteral("Optimized code:\\s*$"), codes},
                              {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true}},
                             QStringLiteral("iterations: 2, beam_width: 1, plans_per_parent: 1, code_per_plan: 1, "
                                            "fix_attempts: 0, parent_slack: [1.1]"),
                             {QStringLiteral("m1")}, {}, QStringLiteral("fake-paired"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        Candidate second;
        for (const Candidate &c : candidates(*h))
            if (c.iteration == 2)
                second = c;
        QVERIFY(!second.metrics.contains(QStringLiteral("noise_floor")));
        QCOMPARE(run.bestCandidateId, second.id);
    }

    // A deterministic metric has no noise: the smallest difference ranks, as without intervals.
    void deterministicMetricRanksAsBefore()
    {
        const QStringList codes{code(QStringLiteral("latency_ms=80")), code(QStringLiteral("latency_ms=79.9"))};
        auto h = makeHarness({{QStringLiteral("code"), QStringLiteral("Optimized code:\\s*$"), codes},
                              {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true}},
                             QStringLiteral("iterations: 2, beam_width: 1, plans_per_parent: 1, code_per_plan: 1, "
                                            "fix_attempts: 0, parent_slack: [1.0]"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        QCOMPARE(toString(run.state), QStringLiteral("finished"));
        Candidate second;
        for (const Candidate &c : candidates(*h))
            if (c.iteration == 2)
                second = c;
        QCOMPARE(second.score, 79.9);
        const auto interval = scoreInterval(second);
        QVERIFY(interval);
        QCOMPARE(interval->low, interval->high);
        QCOMPARE(run.bestCandidateId, second.id);
        QCOMPARE(h->engine->beam(), QList<qint64>{second.id});
    }

    // Where the target times a baseline beside each candidate, every candidate is evaluated against
    // the starting code and ranked by the starting code's latency times its paired ratio: 100 x 0.5
    // ranks ahead of 100 x 0.8 although the latter's absolute time (10 ms, measured in a slow or a
    // fast moment) is lower; the parent slack applies to the same scores (100 x 1.2 is rejected).
    void pairedRatioRanksCandidates()
    {
        const QStringList codes{code(QStringLiteral("latency_ms=10 paired_ratio=0.8")),
                                code(QStringLiteral("latency_ms=50 paired_ratio=0.5")),
                                code(QStringLiteral("latency_ms=5 paired_ratio=1.2"))};
        QStringList plans;
        for (int i = 0; i < 3; ++i)
            plans << QStringLiteral("Chosen optimization: %1. x\nplan number %1").arg(i + 1);
        auto h = makeHarness({{QStringLiteral("code"), QStringLiteral("Optimized code:\\s*$"), codes},
                              {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), plans}},
                             QStringLiteral("iterations: 1, beam_width: 4, plans_per_parent: 3, code_per_plan: 1, "
                                            "fix_attempts: 0, parent_slack: [1.0]"),
                             {QStringLiteral("m1")}, {}, QStringLiteral("fake-paired"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        QCOMPARE(toString(run.state), QStringLiteral("finished"));
        QList<double> beamScores;
        for (qint64 id : h->engine->beam())
            beamScores << h->engine->candidate(id).score;
        // The root is timed alone (its latency, 1 ms by default in the fake); the others against it.
        const double root = run.baselineScore;
        QVERIFY(root > 0);
        QCOMPARE(beamScores, (QList<double>{root * 0.5, root * 0.8, root}));
        QCOMPARE(run.bestScore, root * 0.5);
        for (const Candidate &c : candidates(*h))
            QVERIFY2(c.origin == CandidateOrigin::Root || c.metrics.contains(QStringLiteral("paired_ratio")),
                     "every non-root candidate was timed against a baseline");
    }

    void fixAttemptCarriesPlanCodeAndError()
    {
        auto h = makeHarness(
            {{QStringLiteral("fix"), QStringLiteral("Fixed code:\\s*$"), {code(QStringLiteral("latency_ms=80"))}},
             {QStringLiteral("code"),
              QStringLiteral("Optimized code:\\s*$"),
              {code(QStringLiteral("status=compile_error"))}},
             {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}}},
            QStringLiteral("iterations: 1, beam_width: 2, plans_per_parent: 1, code_per_plan: 1, fix_attempts: 1"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        QCOMPARE(run.bestScore, 80.0);
        const auto requests = h->server.requests();
        const auto fix = std::find_if(requests.begin(), requests.end(),
                                      [](const auto &r) { return r.ruleName == QLatin1String("fix"); });
        QVERIFY(fix != requests.end());
        QVERIFY2(fix->lastUserMessage.contains(QStringLiteral("Tile it.")), "the fix prompt has the plan");
        QVERIFY2(fix->lastUserMessage.contains(QStringLiteral("status=compile_error")),
                 "the fix prompt has the failed code");
        QVERIFY2(fix->lastUserMessage.contains(QStringLiteral("scripted compile error")),
                 "the fix prompt has the compiler output");
        int fixes = 0;
        for (const Candidate &c : candidates(*h))
            if (c.origin == CandidateOrigin::Fix) {
                ++fixes;
                QVERIFY(c.fixOf > 0);
                QCOMPARE(toString(c.status), QStringLiteral("correct"));
            }
        QCOMPARE(fixes, 1);
    }

    // An evaluation `error` is the machine's (a setup step, the sandbox, a loader): no verdict about the
    // code, so no fix request is spent on it, while a compile error in the same run gets its fix.
    void machineErrorIsNeverSentForAFix()
    {
        auto h = makeHarness(
            {{QStringLiteral("fix"), QStringLiteral("Fixed code:\\s*$"), {code(QStringLiteral("latency_ms=80"))}},
             {QStringLiteral("code"),
              QStringLiteral("Optimized code:\\s*$"),
              {code(QStringLiteral("status=error")), code(QStringLiteral("status=compile_error"))}},
             {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}}},
            QStringLiteral("iterations: 1, beam_width: 2, plans_per_parent: 1, code_per_plan: 2, fix_attempts: 2"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        QCOMPARE(toString(run.state), toString(RunState::Finished));
        int machine = 0, fixes = 0;
        qint64 compileError = 0;
        for (const Candidate &c : candidates(*h)) {
            if (isMachineFault(c))
                ++machine;
            if (c.status == CandidateStatus::CompileError)
                compileError = c.id;
            if (c.origin == CandidateOrigin::Fix)
                ++fixes;
        }
        QCOMPARE(machine, 1);
        QVERIFY(compileError > 0);
        // The one fix repairs the compile error; the machine's error got none.
        QCOMPARE(fixes, 1);
        for (const Candidate &c : candidates(*h))
            if (c.origin == CandidateOrigin::Fix)
                QCOMPARE(c.fixOf, compileError);
    }

    // An answer the provider stopped at the output-token limit, with its code block unclosed: the candidate
    // fails saying so and naming the setting (llm.max_tokens, set here to 3000), never as a wrong answer,
    // and no fix is asked for it (it would be cut the same way).
    void cutAnswerSaysSoAndIsNotFixed()
    {
        Rule cut{QStringLiteral("code"),
                 QStringLiteral("Optimized code:\\s*$"),
                 {QStringLiteral("Here is the code.\n```cpp\n// fake: latency_ms=50;\nvoid kernel() {\n  for (int i = "
                                 "0; i < 1000; ++i)")}};
        cut.cutAtLimit = true;
        auto h = makeHarness(
            {{QStringLiteral("fix"), QStringLiteral("Fixed code:\\s*$"), {code(QStringLiteral("latency_ms=80"))}},
             cut,
             {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}}},
            QStringLiteral("iterations: 1, beam_width: 1, plans_per_parent: 1, code_per_plan: 1, fix_attempts: 2"),
            {QStringLiteral("m1")}, QStringLiteral("llm: {max_tokens: 3000}\n"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        // Nothing was evaluated beyond the start, so the run itself ends failed; what matters is why.
        QVERIFY2(run.stopReason.contains(QStringLiteral("cut at the model's output limit")),
                 qPrintable(run.stopReason));
        int cutCandidates = 0;
        for (const Candidate &c : candidates(*h)) {
            QVERIFY2(c.origin != CandidateOrigin::Fix, "no fix is asked for a cut answer");
            if (c.origin == CandidateOrigin::Root)
                continue;
            ++cutCandidates;
            QCOMPARE(toString(c.status), QStringLiteral("failed"));
            QVERIFY2(c.error.contains(
                         QStringLiteral("cut at the model's output limit (max_tokens 3000, stop reason 'length')")),
                     qPrintable(c.error));
            QVERIFY2(c.error.contains(QStringLiteral("llm.max_tokens")), qPrintable(c.error));
        }
        QCOMPARE(cutCandidates, 1);
        for (const auto &r : h->server.requests()) {
            QVERIFY(r.ruleName != QLatin1String("fix"));
            // The limit reached the provider as the request's max_tokens.
            QVERIFY2(r.body.contains("\"max_tokens\":3000") || r.body.contains("\"max_completion_tokens\":3000"),
                     r.body.left(400).constData());
        }
    }

    // A target whose setup step fails on purpose (its tool includes a header that is not there): the
    // starting code's evaluation ends in `error`, and the run fails saying that the step failed and that
    // this is the machine's problem (never "does not pass its own harness"), with the compiler's whole
    // output, and no LLM request is sent at all (no plan, no fix).
    void failedSetupIsTheMachinesNotTheCodes()
    {
        auto h = makeHarness({{QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}}},
                             QStringLiteral("iterations: 1, beam_width: 1, plans_per_parent: 1, code_per_plan: 1"),
                             {QStringLiteral("m1")}, {}, QStringLiteral("fake-broken-start"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        QCOMPARE(toString(run.state), toString(RunState::Failed));
        QVERIFY2(run.stopReason.startsWith(QStringLiteral("the starting code could not be evaluated on this machine")),
                 qPrintable(run.stopReason));
        QVERIFY2(!run.stopReason.contains(QStringLiteral("does not pass its own harness")), qPrintable(run.stopReason));
        QVERIFY2(run.stopReason.contains(QStringLiteral("its step 'build_tool'")), qPrintable(run.stopReason));
        QVERIFY2(run.stopReason.contains(QStringLiteral("problem of this machine")), qPrintable(run.stopReason));
        QVERIFY2(run.stopReason.contains(QStringLiteral("absent_header.h")), qPrintable(run.stopReason));
        QVERIFY2(run.stopReason.count(QLatin1Char('\n')) >= 2, "the log keeps its lines");
        const auto roots = candidates(*h);
        QCOMPARE(roots.size(), 1);
        QVERIFY(isMachineFault(roots.first()));
        QCOMPARE(h->server.requests().size(), 0);
    }

    // Without the hardware and with evaluation.compile_only the start only compiles (no_hardware): the
    // search still plans, writes and fixes candidates, ranks none, and the beam stays the start.
    void compileOnlyRunFixesWithoutRanking()
    {
        auto h = makeHarness(
            {{QStringLiteral("fix"), QStringLiteral("Fixed code:\\s*$"), {code(QStringLiteral("latency_ms=5"))}},
             {QStringLiteral("code"),
              QStringLiteral("Optimized code:\\s*$"),
              {code(QStringLiteral("status=compile_error"))}},
             {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}}},
            QStringLiteral("iterations: 1, beam_width: 2, plans_per_parent: 1, code_per_plan: 1, fix_attempts: 1"),
            {QStringLiteral("m1")}, QStringLiteral("evaluation: {compile_only: true}\n"), QStringLiteral("fake-nohw"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        QCOMPARE(toString(run.state), toString(RunState::Finished));
        QCOMPARE(run.bestScore, 0.0); // nothing measured: no score, no made-up one
        QMap<QString, int> statuses;
        for (const Candidate &c : candidates(*h)) {
            QVERIFY(!c.hasScore());
            ++statuses[(c.origin == CandidateOrigin::Root      ? QStringLiteral("root ")
                            : c.origin == CandidateOrigin::Fix ? QStringLiteral("fix ")
                                                               : QString())
                       + toString(c.status)];
        }
        QCOMPARE(statuses,
                 (QMap<QString, int>{{QStringLiteral("root no_hardware"), 1},
                                     {QStringLiteral("compile_error"), 1},
                                     {QStringLiteral("fix no_hardware"), 1}}));
    }

    void feedbackAndUnitsReachThePlanPrompt()
    {
        auto h = makeHarness({{QStringLiteral("code"),
                               QStringLiteral("Optimized code:\\s*$"),
                               {code(QStringLiteral("latency_ms=90 feedback=D1_miss_rate_12%"))},
                               true},
                              {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true}},
                             QStringLiteral("iterations: 2, beam_width: 1, plans_per_parent: 1, code_per_plan: 1"));
        QVERIFY(h);
        runToEnd(*h);
        const QStringList planPrompts = planPromptsOf(*h);
        QCOMPARE(planPrompts.size(), 2);
        QVERIFY(planPrompts.at(0).contains(QStringLiteral("latency_ms: median 100 ms")));
        QVERIFY(planPrompts.at(1).contains(QStringLiteral("latency_ms: median 90 ms")));
        QVERIFY(planPrompts.at(1).contains(QStringLiteral("D1 miss rate 12%")));
        QVERIFY(planPrompts.at(1).contains(QStringLiteral("phase 2 out of 2")));
    }

    void feedbackCanBeLeftOut()
    {
        auto h = makeHarness(
            {{QStringLiteral("code"),
              QStringLiteral("Optimized code:\\s*$"),
              {code(QStringLiteral("latency_ms=90 feedback=D1_miss_rate_12%"))},
              true},
             {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true}},
            QStringLiteral("iterations: 2, beam_width: 1, plans_per_parent: 1, code_per_plan: 1, feedback: false"));
        QVERIFY(h);
        runToEnd(*h);
        const QStringList planPrompts = planPromptsOf(*h);
        QCOMPARE(planPrompts.size(), 2);
        QVERIFY(planPrompts.at(1).contains(QStringLiteral("latency_ms: median 90 ms"))); // the measurement stays
        QVERIFY(!planPrompts.at(1).contains(QStringLiteral("D1 miss rate 12%")));
    }

    void editModeAppliesOrFailsWithAReason()
    {
        const QString good = QStringLiteral("<<<<<<< SEARCH\n// fake: status=ok latency_ms=100\n=======\n// fake: "
                                            "status=ok latency_ms=40;\n>>>>>>> REPLACE\n");
        const QString fuzzy = QStringLiteral("<<<<<<< SEARCH\n   void    kernel()   {}\n=======\nvoid kernel() { /* "
                                             "faster */ }\n// fake: latency_ms=60;\n>>>>>>> REPLACE\n");
        const QString bad = QStringLiteral(
            "<<<<<<< SEARCH\nint nothing_like_this;\n=======\nint x;\n>>>>>>> REPLACE\n");
        auto h = makeHarness({{QStringLiteral("code"), QStringLiteral("Optimized code:\\s*$"), {good, fuzzy, bad}},
                              {QStringLiteral("plan"),
                               QStringLiteral("Plan:\\s*$"),
                               {s_plan, QStringLiteral("Chosen optimization: 2. beta\nB."),
                                QStringLiteral("Chosen optimization: 3. gamma\nC.")}}},
                             QStringLiteral("iterations: 1, beam_width: 4, plans_per_parent: 3, code_per_plan: 1, "
                                            "edit_mode: true, fix_attempts: 0"));
        QVERIFY(h);
        runToEnd(*h);
        QList<double> scores;
        int applyFailures = 0;
        for (const Candidate &c : candidates(*h)) {
            if (c.origin == CandidateOrigin::Root)
                continue;
            if (c.hasScore())
                scores << c.score;
            else if (c.error.contains(QStringLiteral("edit not applied"))
                     && c.error.contains(QStringLiteral("matches nothing")))
                ++applyFailures;
        }
        std::sort(scores.begin(), scores.end());
        QCOMPARE(scores, (QList<double>{40, 60}));
        QCOMPARE(applyFailures, 1);
        const auto requests = h->server.requests();
        QVERIFY(requests.last().lastUserMessage.contains(QStringLiteral("<<<<<<< SEARCH"))
                || requests.first().lastUserMessage.contains(QStringLiteral("SEARCH")));
    }

    void translationScoresKeepIncompleteOnesApart()
    {
        auto h = makeHarness(
            {{QStringLiteral("score"),
              QStringLiteral("completeness score:\\s*$"),
              {QStringLiteral("9"), QStringLiteral("3")}},
             {QStringLiteral("code"),
              QStringLiteral("Optimized code:\\s*$"),
              {code(QStringLiteral("latency_ms=120")), code(QStringLiteral("latency_ms=110"))}},
             {QStringLiteral("plan"),
              QStringLiteral("Plan:\\s*$"),
              {QStringLiteral("Chosen optimization: 1. translate\nT1"),
               QStringLiteral("Chosen optimization: 1. translate\nT2")}}},
            QStringLiteral("iterations: 1, beam_width: 4, plans_per_parent: 2, code_per_plan: 1, translate_iters: 1"));
        QVERIFY(h);
        runToEnd(*h);
        bool sawTranslationMenu = false;
        for (const auto &r : h->server.requests())
            sawTranslationMenu |= r.ruleName == QLatin1String("plan")
                && r.lastUserMessage.contains(QStringLiteral("## Translation menu"));
        QVERIFY(sawTranslationMenu);
        const QList<qint64> beam = h->engine->beam();
        QCOMPARE(beam.size(), 1);
        const Candidate only = h->engine->candidate(beam.first());
        QCOMPARE(toString(only.origin), QStringLiteral("llm")); // the original left the beam
        QCOMPARE(only.metrics.value(QStringLiteral("translation_score")).toDouble(), 9.0);
    }

    void earlyStopEndsAFlatRun()
    {
        auto h = makeHarness({{QStringLiteral("code"),
                               QStringLiteral("Optimized code:\\s*$"),
                               {code(QStringLiteral("latency_ms=99.9"))},
                               true},
                              {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true}},
                             QStringLiteral("iterations: 6, beam_width: 1, plans_per_parent: 1, code_per_plan: 1, "
                                            "early_stop: 1.05, early_stop_patience: 2"));
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        QCOMPARE(toString(run.state), QStringLiteral("finished"));
        QVERIFY2(run.stopReason.startsWith(QStringLiteral("early stop")), qPrintable(run.stopReason));
        QCOMPARE(run.iteration, 2);
    }

    void budgets_data()
    {
        QTest::addColumn<QString>("budget");
        QTest::addColumn<QString>("reason");
        QTest::newRow("llm calls") << QStringLiteral("budget: {max_llm_calls: 3}") << QStringLiteral("LLM calls");
        QTest::newRow("wall time") << QStringLiteral("budget: {max_hours: 0.0001}") << QStringLiteral("wall time");
        QTest::newRow("dollars") << QStringLiteral("budget: {max_usd: 0.5}") << QStringLiteral("max_usd");
    }
    void budgets()
    {
        QFETCH(QString, budget);
        QFETCH(QString, reason);
        // Dollars come from the price table; a user copy (it shadows the shipped one) prices the test model
        // at $1000 per million tokens, so a few calls pass the budget.
        QTemporaryDir home;
        const QByteArray oldHome = qgetenv("XDG_DATA_HOME");
        qputenv("XDG_DATA_HOME", QFile::encodeName(home.path()));
        auto restore = qScopeGuard([&] {
            if (oldHome.isNull())
                qunsetenv("XDG_DATA_HOME");
            else
                qputenv("XDG_DATA_HOME", oldHome);
        });
        QDir().mkpath(home.filePath(QStringLiteral("autocomp-workbench")));
        QFile prices(home.filePath(QStringLiteral("autocomp-workbench/prices.yaml")));
        QVERIFY(prices.open(QIODevice::WriteOnly));
        prices.write("as_of: 2026-11-22\nmodels:\n  openai-compatible::m1: {input: 1000, output: 1000}\n");
        prices.close();
        // Each answer differs (the same code again would be a duplicate, not evaluated, taking no time).
        QStringList codes;
        for (int i = 0; i < 40; ++i)
            codes << code(QStringLiteral("latency_ms=90 bench_ms=200 variant=%1").arg(i));
        auto h = makeHarness({{QStringLiteral("code"), QStringLiteral("Optimized code:\\s*$"), codes, true},
                              {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true}},
                             QStringLiteral("iterations: 8, beam_width: 2, plans_per_parent: 2, code_per_plan: 1"),
                             {QStringLiteral("m1")}, budget);
        QVERIFY(h);
        const RunInfo run = runToEnd(*h);
        QCOMPARE(toString(run.state), QStringLiteral("stopped"));
        QVERIFY2(run.stopReason.contains(reason), qPrintable(run.stopReason));
        QVERIFY(run.iteration < 8);
        if (reason == QLatin1String("max_usd")) {
            QVERIFY2(run.usd >= 0.5, qPrintable(QString::number(run.usd)));
            double perCall = 0;
            QString error;
            auto store = RunStore::open(h->storePath, &error);
            for (const LlmCall &call : store->llmCalls(run.id))
                perCall += call.usd;
            QCOMPARE(perCall, run.usd); // the run's total is the sum of its calls
        }
    }

    void scheduleSeedsANewRun()
    {
        QString schedulePath;
        QString storePath;
        QTemporaryDir keep;
        {
            auto a = makeHarness({{QStringLiteral("code"),
                                   QStringLiteral("Optimized code:\\s*$"),
                                   {code(QStringLiteral("latency_ms=90")), code(QStringLiteral("latency_ms=80"))}},
                                  {QStringLiteral("plan"),
                                   QStringLiteral("Plan:\\s*$"),
                                   {QStringLiteral("Chosen optimization: 3. gamma\nG"),
                                    QStringLiteral("Chosen optimization: 5. epsilon\nE")}}},
                                 QStringLiteral("iterations: 2, beam_width: 1, plans_per_parent: 1, code_per_plan: 1"));
            QVERIFY(a);
            const RunInfo run = runToEnd(*a);
            QCOMPARE(run.schedule, (QStringList{QStringLiteral("gamma: unroll"), QStringLiteral("epsilon: fuse")}));
            storePath = keep.filePath(QStringLiteral("a.sqlite"));
            QVERIFY(QFile::copy(a->storePath, storePath));
        }
        // Seed run B with the schedule written to a file.
        schedulePath = keep.filePath(QStringLiteral("schedule.yaml"));
        QFile file(schedulePath);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("schedule:\n  - \"gamma: unroll\"\n  - \"epsilon: fuse\"\n");
        file.close();
        auto b = makeHarness(
            {{QStringLiteral("code"),
              QStringLiteral("Optimized code:\\s*$"),
              {code(QStringLiteral("latency_ms=70"))},
              true},
             {QStringLiteral("plan"),
              QStringLiteral("Plan:\\s*$"),
              {QStringLiteral("Chosen optimization: 1. alpha\nA")},
              true}},
            QStringLiteral("iterations: 3, beam_width: 1, plans_per_parent: 1, code_per_plan: 1, schedule: \"%1\"")
                .arg(schedulePath));
        QVERIFY(b);
        runToEnd(*b);
        QStringList forced;
        for (const Candidate &c : candidates(*b))
            if (c.origin == CandidateOrigin::Llm)
                forced << c.menuItem;
        QCOMPARE(forced.mid(0, 2), (QStringList{QStringLiteral("gamma: unroll"), QStringLiteral("epsilon: fuse")}));
        QCOMPARE(forced.value(2), QStringLiteral("alpha: tile the loops")); // then normal search
        int forcedPrompts = 0;
        for (const auto &r : b->server.requests())
            forcedPrompts += r.lastUserMessage.contains(QStringLiteral("Apply this optimization from the menu"));
        QCOMPARE(forcedPrompts, 2);
    }

    void pauseStartsNothingNewUntilResumed()
    {
        auto h = makeHarness({{QStringLiteral("code"),
                               QStringLiteral("Optimized code:\\s*$"),
                               {code(QStringLiteral("latency_ms=90 bench_ms=50"))},
                               true,
                               100},
                              {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true, 100}},
                             QStringLiteral("iterations: 2, beam_width: 2, plans_per_parent: 3, code_per_plan: 2"));
        QVERIFY(h);
        QSignalSpy states(h->engine.get(), &SearchEngine::runStateChanged);
        QSignalSpy finished(h->engine.get(), &SearchEngine::finished);
        QString error;
        QVERIFY(h->engine->start(&error));
        QTRY_VERIFY_WITH_TIMEOUT(h->server.requestCount() >= 1, 30000);
        h->engine->pause();
        QTRY_COMPARE_WITH_TIMEOUT(toString(h->engine->state()), QStringLiteral("paused"), 30000);
        const int sent = h->server.requestCount();
        QTest::qWait(1500);
        QCOMPARE(h->server.requestCount(), sent);
        QCOMPARE(h->engine->inFlightRequests(), 0);
        QCOMPARE(h->engine->inFlightEvaluations(), 0);
        {
            auto store = RunStore::open(h->storePath, &error);
            QCOMPARE(toString(store->run(h->engine->runId())->state), QStringLiteral("paused"));
        }
        h->engine->resumeWork();
        QVERIFY(finished.wait(60000));
        QCOMPARE(toString(h->engine->state()), QStringLiteral("finished"));
        QVERIFY(h->server.requestCount() > sent);
    }

    void humanPlanAndCodeJoinTheSearch()
    {
        auto h = makeHarness({{QStringLiteral("human-plan-code"),
                               QStringLiteral("hand-written plan[\\s\\S]*Optimized code:\\s*$"),
                               {code(QStringLiteral("latency_ms=30"))},
                               true},
                              {QStringLiteral("code"),
                               QStringLiteral("Optimized code:\\s*$"),
                               {code(QStringLiteral("latency_ms=90 bench_ms=100"))},
                               true,
                               200},
                              {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true, 200}},
                             QStringLiteral("iterations: 1, beam_width: 4, plans_per_parent: 1, code_per_plan: 1"));
        QVERIFY(h);
        QSignalSpy finished(h->engine.get(), &SearchEngine::finished);
        QString error;
        QVERIFY(h->engine->start(&error));
        QTRY_VERIFY_WITH_TIMEOUT(h->server.requestCount() >= 1, 30000); // iteration 1 has begun
        const qint64 root = h->engine->beam().first();
        const qint64 planned = h->engine->addHumanPlan(root, QStringLiteral("A hand-written plan: hoist everything."),
                                                       &error);
        QVERIFY2(planned > 0, qPrintable(error));
        const qint64 edited = h->engine->addHumanCode(
            root, QStringLiteral("// fake: status=ok latency_ms=20;\nvoid kernel() {}\n"), &error);
        QVERIFY2(edited > 0, qPrintable(error));
        QVERIFY(finished.wait(60000));
        QCOMPARE(toString(h->engine->candidate(edited).origin), QStringLiteral("human"));
        QCOMPARE(h->engine->candidate(edited).score, 20.0);
        QCOMPARE(h->engine->candidate(planned).score, 30.0);
        QCOMPARE(h->engine->beam().value(0), edited);
        QCOMPARE(h->engine->beam().value(1), planned);
        QCOMPARE(h->engine->runInfo().bestCandidateId, edited);
    }

    void sameSeedSameChoices()
    {
        QList<QStringList> prompts;
        for (int round = 0; round < 2; ++round) {
            auto h = makeHarness(
                {{QStringLiteral("code"),
                  QStringLiteral("Optimized code:\\s*$"),
                  {code(QStringLiteral("latency_ms=90"))},
                  true},
                 {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true}},
                QStringLiteral("iterations: 1, beam_width: 2, plans_per_parent: 4, code_per_plan: 1, seed: 42"));
            QVERIFY(h);
            runToEnd(*h);
            QStringList p;
            for (const auto &r : h->server.requests())
                if (r.ruleName == QLatin1String("plan"))
                    p << r.lastUserMessage;
            p.sort();
            prompts << p;
        }
        QCOMPARE(prompts.at(0).size(), 4);
        QCOMPARE(prompts.at(0), prompts.at(1));
    }

    // search.skip_planning: one call per prompt writes the code (reasoning first, the menu shown); plans_per_parent
    // distinct prompts per parent, code_per_plan samples each; no plan request at all.
    void skipPlanningSendsNoPlanRequest()
    {
        const auto direct = [](const QString &latency) -> QString {
            return QStringLiteral("The loop is memory bound.\nChosen optimization: 2. beta: vectorize\n")
                + code(QStringLiteral("latency_ms=") + latency);
        };
        auto h = makeHarness(
            {{QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true},
             {QStringLiteral("code"),
              QStringLiteral("Optimized code:\\s*$"),
              {code(QStringLiteral("latency_ms=50"))},
              true},
             {QStringLiteral("direct"),
              QStringLiteral("Reasoning and code:\\s*$"),
              {direct(QStringLiteral("90")), direct(QStringLiteral("80")), direct(QStringLiteral("70")),
               direct(QStringLiteral("60"))}}},
            QStringLiteral("iterations: 1, beam_width: 2, plans_per_parent: 2, code_per_plan: 2, skip_planning: true"));
        QVERIFY(h);
        QCOMPARE(toString(runToEnd(*h).state), QStringLiteral("finished"));
        int directRequests = 0;
        QSet<QString> prompts;
        for (const auto &r : h->server.requests()) {
            QVERIFY2(r.ruleName == QLatin1String("direct"),
                     qPrintable(r.ruleName + QStringLiteral(": ") + r.lastUserMessage.right(80)));
            ++directRequests;
            prompts.insert(r.lastUserMessage);
            QVERIFY(r.lastUserMessage.contains(QStringLiteral("## Optimization menu\n\n"))); // the menu is still shown
            QVERIFY(!PromptBuilder::offeredMenu(r.lastUserMessage).isEmpty());
        }
        QCOMPARE(directRequests, 4); // 2 prompts x 2 samples
        QVERIFY(prompts.size() <= 2);
        QString error;
        auto store = RunStore::open(h->storePath, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->llmCalls(h->engine->runId(), QStringLiteral("plan")).size(), 0);
        const QList<LlmCall> calls = store->llmCalls(h->engine->runId(), QStringLiteral("direct"));
        QCOMPARE(calls.size(), 4);
        QList<double> scores;
        for (const Candidate &c : candidates(*h)) {
            if (c.origin == CandidateOrigin::Root)
                continue;
            QCOMPARE(c.menuItem, QStringLiteral("beta: vectorize"));
            QVERIFY(c.plan.contains(QStringLiteral("memory bound")));
            QVERIFY(std::any_of(calls.cbegin(), calls.cend(),
                                [&](const LlmCall &call) { return call.id == c.planCallId; }));
            QCOMPARE(toString(c.status), QStringLiteral("correct"));
            scores << c.score;
        }
        std::sort(scores.begin(), scores.end());
        QCOMPARE(scores, (QList<double>{60, 70, 80, 90}));
    }

    // A skip_planning run stopped after its first answer and resumed: each (prompt, sample) position ends with
    // exactly one candidate, the stored ones are adopted and only the missing samples are asked again.
    void skipPlanningResumesWithoutRepeatingSamples()
    {
        const auto direct = [](const QString &latency) -> QString {
            return QStringLiteral("Reasoning.\nChosen optimization: 1. alpha: tile the loops\n")
                + code(QStringLiteral("latency_ms=") + latency);
        };
        Rule answers{QStringLiteral("direct"),
                     QStringLiteral("Reasoning and code:\\s*$"),
                     {direct(QStringLiteral("90")), direct(QStringLiteral("80")), direct(QStringLiteral("70")),
                      direct(QStringLiteral("60")), direct(QStringLiteral("50")), direct(QStringLiteral("40")),
                      direct(QStringLiteral("30"))}};
        answers.cycle = true;
        // The first answer comes at once, the others seconds later: the stop the first one triggers lands before them
        // however loaded the machine is.
        answers.delaysMs = {50, 4000, 4000, 4000, 300, 300, 300};
        auto h = makeHarness(
            {answers},
            QStringLiteral("iterations: 1, beam_width: 2, plans_per_parent: 2, code_per_plan: 2, skip_planning: true"));
        QVERIFY(h);
        QSignalSpy finished(h->engine.get(), &SearchEngine::finished);
        bool stopped = false;
        connect(h->engine.get(), &SearchEngine::candidateAdded, this, [&](const Candidate &c) {
            if (c.origin == CandidateOrigin::Llm && !stopped) {
                stopped = true;
                QMetaObject::invokeMethod(
                    h->engine.get(), [&] { h->engine->stop(QStringLiteral("test")); }, Qt::QueuedConnection);
            }
        });
        QString error;
        QVERIFY2(h->engine->start(&error), qPrintable(error));
        QVERIFY(finished.wait(60000));
        const qint64 runId = h->engine->runId();
        const int before = int(candidates(*h).size());
        QVERIFY(before >= 2 && before < 5); // the start and at least one answer, not all four

        SearchEngine resumed(h->engine->setup());
        QSignalSpy resumedFinished(&resumed, &SearchEngine::finished);
        QVERIFY2(resumed.resume(runId, &error), qPrintable(error));
        QVERIFY(resumedFinished.wait(60000));
        QCOMPARE(toString(resumed.state()), QStringLiteral("finished"));
        QSet<QPair<int, int>> positions;
        int llm = 0;
        for (const Candidate &c : candidates(*h)) {
            if (c.origin != CandidateOrigin::Llm)
                continue;
            ++llm;
            positions.insert({c.planSlot, c.sample});
            QCOMPARE(toString(c.status),
                     QStringLiteral("correct")); // each from a direct answer, none from a code prompt
        }
        QCOMPARE(llm, 4);
        QCOMPARE(positions.size(), 4);
    }

    // search.menu_strategy: one-shot: one strategy request per parent, whose new strategies join that parent's
    // menu before dropout (and those already on the menu do not come twice).
    void oneShotMenuProposesStrategiesPerParent()
    {
        auto h = makeHarness({{QStringLiteral("menu"),
                               QStringLiteral("New strategies:\\s*$"),
                               {QStringLiteral("Ideas:\n<strategies>\n1. omega: split the kernel\n- alpha: tile the "
                                               "loops\nkappa: align the buffers\n</strategies>")},
                               true},
                              {QStringLiteral("code"),
                               QStringLiteral("Optimized code:\\s*$"),
                               {code(QStringLiteral("latency_ms=80")), code(QStringLiteral("latency_ms=70")),
                                code(QStringLiteral("latency_ms=60")), code(QStringLiteral("latency_ms=55")),
                                code(QStringLiteral("latency_ms=50")), code(QStringLiteral("latency_ms=45"))}},
                              {QStringLiteral("plan"),
                               QStringLiteral("Plan:\\s*$"),
                               {QStringLiteral("Chosen optimization: 9. omega: split the kernel\nSplit it in two."),
                                QStringLiteral("Chosen optimization: 9. omega: split the kernel\nSplit it in four.")},
                               true}},
                             QStringLiteral("iterations: 2, beam_width: 2, plans_per_parent: 2, code_per_plan: 1, "
                                            "menu_dropout: 0, menu_strategy: one-shot"));
        QVERIFY(h);
        QCOMPARE(toString(runToEnd(*h).state), QStringLiteral("finished"));
        int menuRequests = 0;
        int planRequests = 0;
        for (const auto &r : h->server.requests()) {
            if (r.ruleName == QLatin1String("menu")) {
                ++menuRequests;
                QVERIFY(r.lastUserMessage.contains(QStringLiteral("## Current menu\n\n- alpha: tile the loops\n")));
            } else if (r.ruleName == QLatin1String("plan")) {
                ++planRequests;
                const QStringList offered = PromptBuilder::offeredMenu(r.lastUserMessage);
                QCOMPARE(offered.size(), 10); // the agent's 8 and the 2 new ones, none dropped (menu_dropout 0)
                QCOMPARE(offered.at(8), QStringLiteral("omega: split the kernel"));
                QCOMPARE(offered.at(9), QStringLiteral("kappa: align the buffers"));
            }
        }
        // Parents: the start in iteration 1, the two new beam members in iteration 2.
        QCOMPARE(menuRequests, 3);
        QCOMPARE(planRequests, 6);
        QString error;
        auto store = RunStore::open(h->storePath, &error);
        QVERIFY2(store, qPrintable(error));
        const QList<LlmCall> menuCalls = store->llmCalls(h->engine->runId(), QStringLiteral("menu"));
        QCOMPARE(menuCalls.size(), 3);
        QSet<qint64> parents;
        for (const LlmCall &call : menuCalls)
            parents.insert(call.candidateId);
        QCOMPARE(parents.size(), 3);
        for (const Candidate &c : candidates(*h))
            if (c.origin == CandidateOrigin::Llm)
                QCOMPARE(c.menuItem, QStringLiteral("omega: split the kernel"));
        // Menu insights list the proposed strategies apart from the agent's own, with the same figures.
        const QList<StrategyRecord> records = MenuInsights::compute(*store, {h->engine->runId()},
                                                                    MenuInsights::Grouping::Strategy);
        bool sawOmega = false;
        for (const StrategyRecord &r : records) {
            QCOMPARE(r.proposed,
                     r.strategy == QLatin1String("omega: split the kernel")
                         || r.strategy == QLatin1String("kappa: align the buffers"));
            if (r.strategy == QLatin1String("omega: split the kernel")) {
                sawOmega = true;
                QCOMPARE(r.offered, 6);
                QCOMPARE(r.chosen, 6);
                QCOMPARE(r.correct, 6);
            }
        }
        QVERIFY(sawOmega);
    }

    // search.example_rate: a model picks the relevant examples once per parent; only those reach the plan prompt.
    void exampleSelectionPutsOnlyChosenExamplesInThePlanPrompt()
    {
        QTemporaryDir data;
        const QString fake = qEnvironmentVariable("AUTOCOMP_FAKE_DATA") + QStringLiteral("/agents/fake/");
        const QString agentDir = data.filePath(QStringLiteral("agents/fake-examples/"));
        QVERIFY(QDir().mkpath(agentDir));
        for (const QString &file : QDir(fake).entryList(QDir::Files))
            QVERIFY(QFile::copy(fake + file, agentDir + file));
        QFile examples(agentDir + QStringLiteral("code_examples.md"));
        QVERIFY(examples.open(QIODevice::WriteOnly));
        examples.write("## Blocked loop\nSUMMARY: tiles a loop nest\n```cpp\n// EXAMPLE-ONE\n```\n\n"
                       "## Vector add\nSUMMARY: a vectorized add\n```cpp\n// EXAMPLE-TWO\n```\n\n"
                       "## Prefetching\nSUMMARY: software prefetch\n```cpp\n// EXAMPLE-THREE\n```\n");
        examples.close();
        m_agent = QStringLiteral("fake-examples");
        m_dataDirs = {data.path()};
        const auto restore = qScopeGuard([this] {
            m_agent = QStringLiteral("fake");
            m_dataDirs.clear();
        });
        auto h = makeHarness(
            {{QStringLiteral("examples"), QStringLiteral("Relevant examples:\\s*$"), {QStringLiteral("2")}, true},
             {QStringLiteral("code"),
              QStringLiteral("Optimized code:\\s*$"),
              {code(QStringLiteral("latency_ms=90"))},
              true},
             {QStringLiteral("plan"), QStringLiteral("Plan:\\s*$"), {s_plan}, true}},
            QStringLiteral("iterations: 1, beam_width: 1, plans_per_parent: 3, code_per_plan: 1, example_rate: 1.0"));
        QVERIFY(h);
        QCOMPARE(toString(runToEnd(*h).state), QStringLiteral("finished"));
        int exampleRequests = 0;
        for (const auto &r : h->server.requests())
            if (r.ruleName == QLatin1String("examples")) {
                ++exampleRequests;
                QVERIFY(r.lastUserMessage.contains(QStringLiteral("2. Vector add: a vectorized add")));
                QVERIFY(!r.lastUserMessage.contains(QStringLiteral("EXAMPLE-"))); // names and summaries, not code
            }
        QCOMPARE(exampleRequests, 1); // one parent
        const QStringList plans = planPromptsOf(*h);
        QCOMPARE(plans.size(), 3);
        for (const QString &prompt : plans) {
            QVERIFY(prompt.contains(QStringLiteral("// EXAMPLE-TWO")));
            QVERIFY(!prompt.contains(QStringLiteral("EXAMPLE-ONE")));
            QVERIFY(!prompt.contains(QStringLiteral("EXAMPLE-THREE")));
        }
        QString error;
        auto store = RunStore::open(h->storePath, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->llmCalls(h->engine->runId(), QStringLiteral("examples")).size(), 1);
    }

    // search.translate_score: a 5 never enters the beam, translation ends once every beam candidate scores >= 9
    // (here after 1 of 2 translation iterations), and translate_perf_threshold (15) keeps a 20x slower one out.
    void translateScoreEndsTranslationEarly()
    {
        auto h = makeHarness(
            {{QStringLiteral("score5"),
              QStringLiteral("latency_ms=110[\\s\\S]*completeness score:\\s*$"),
              {QStringLiteral("5")},
              true},
             {QStringLiteral("score"), QStringLiteral("completeness score:\\s*$"), {QStringLiteral("9.5")}, true},
             {QStringLiteral("code"),
              QStringLiteral("Optimized code:\\s*$"),
              {code(QStringLiteral("latency_ms=120")), code(QStringLiteral("latency_ms=110")),
               code(QStringLiteral("latency_ms=2000")), code(QStringLiteral("latency_ms=95"))},
              true},
             {QStringLiteral("plan"),
              QStringLiteral("Plan:\\s*$"),
              {QStringLiteral("Chosen optimization: 1. translate\nT1"),
               QStringLiteral("Chosen optimization: 1. translate\nT2"),
               QStringLiteral("Chosen optimization: 1. translate\nT3")},
              true}},
            QStringLiteral("iterations: 2, beam_width: 4, plans_per_parent: 3, code_per_plan: 1, translate_iters: 2, "
                           "translate_score: true"));
        QVERIFY(h);
        QCOMPARE(toString(runToEnd(*h).state), QStringLiteral("finished"));
        QList<Candidate> all = candidates(*h);
        Candidate translated, partial, slow;
        for (const Candidate &c : std::as_const(all)) {
            if (c.iteration != 1 || c.origin == CandidateOrigin::Root)
                continue;
            if (c.score == 120)
                translated = c;
            else if (c.score == 110)
                partial = c;
            else if (c.score == 2000)
                slow = c;
        }
        QVERIFY(translated.id && partial.id && slow.id);
        QCOMPARE(partial.metrics.value(QStringLiteral("translation_score")).toDouble(), 5.0);
        QCOMPARE(translated.metrics.value(QStringLiteral("translation_score")).toDouble(), 9.5);
        QCOMPARE(slow.metrics.value(QStringLiteral("translation_score")).toDouble(), 9.5);
        // Iteration 2 optimizes: its parents are only the complete, fast-enough translation.
        int secondIteration = 0;
        for (const Candidate &c : std::as_const(all)) {
            if (c.iteration != 2)
                continue;
            ++secondIteration;
            QCOMPARE(c.parentId, translated.id);
            QVERIFY(!c.metrics.contains(QStringLiteral("translation_score"))); // no scores once translation ended
        }
        QCOMPARE(secondIteration, 3);
        for (const QString &prompt : planPromptsOf(*h))
            if (prompt.contains(QStringLiteral("This is phase 2 out of 2")))
                QVERIFY(prompt.contains(QStringLiteral("## Optimization menu"))
                        && !prompt.contains(QStringLiteral("## Translation menu")));
        QString error;
        auto store = RunStore::open(h->storePath, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->llmCalls(h->engine->runId(), QStringLiteral("score")).size(), 3);
        QVERIFY(!partial.inBeam && !slow.inBeam);
    }
};

QTEST_GUILESS_MAIN(TestSearchEngine)
#include "tst_search_engine.moc"
