// ResponseParser (code and menu choice out of LLM answers) and PromptBuilder (what the planner is shown).
#include "agents/prompt_builder.h"
#include "agents/response_parser.h"

#include <QJsonObject>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace autocomp;

namespace {

const QStringList Menu{
    u"Tile the loops for the cache hierarchy"_s,
    u"Register blocking"_s,
    u"Vectorize the innermost loop with AVX2/FMA intrinsics"_s,
    u"Interchange loops so the innermost loop walks contiguous memory"_s,
};

} // namespace

class TestResponseParser : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void extractCode_data();
    void extractCode();
    void parseMenuChoice_data();
    void parseMenuChoice();
    void planPromptShowsWhatThePlannerNeeds();
    void planPromptIsDeterministic();
    void planPromptForcedItem();
    void codeAndFixPrompts();
    void describeMetrics_data();
    void describeMetrics();
    void trimLogCutsLongLines();
    void trimLogKeepsHeadAndTail();
    void trimLogLeavesShortLogsAlone();
};

void TestResponseParser::extractCode_data()
{
    QTest::addColumn<QString>("response");
    QTest::addColumn<QString>("language");
    QTest::addColumn<bool>("found");
    QTest::addColumn<QString>("code");

    QTest::newRow("single tagged block") << u"Here:\n```cpp\nint a;\n```\nDone."_s << u"cpp"_s << true << u"int a;\n"_s;
    QTest::newRow("last complete block wins")
        << u"First try:\n```cpp\nint old;\n```\nBetter:\n```cpp\nint better;\n```\n"_s << u"cpp"_s << true
        << u"int better;\n"_s;
    QTest::newRow("tagged block preferred over later untagged")
        << u"```cpp\nint code;\n```\nOutput:\n```\n$ ./a.out\n1.2 ms\n```\n"_s << u"cpp"_s << true << u"int code;\n"_s;
    QTest::newRow("alias c++ for cpp") << u"```c++\nint x;\n```\n```text\nnotes\n```"_s << u"cpp"_s << true
                                       << u"int x;\n"_s;
    QTest::newRow("tagged python block over bash block")
        << u"```python\nimport nki\n```\n```bash\nrun.sh\n```"_s << u"python"_s << true << u"import nki\n"_s;
    QTest::newRow("untagged fallback") << u"Code:\n```\nvoid f() {}\n```\n"_s << u"cpp"_s << true << u"void f() {}\n"_s;
    QTest::newRow("unterminated last block ignored")
        << u"```cpp\nint complete;\n```\nAnd now:\n```cpp\nint cut_off_mid_"_s << u"cpp"_s << true
        << u"int complete;\n"_s;
    QTest::newRow("only an unterminated block") << u"```cpp\nint cut_off;\n"_s << u"cpp"_s << false << QString();
    QTest::newRow("no block at all") << u"I would tile the loops by 64."_s << u"cpp"_s << false << QString();
    QTest::newRow("indented fences") << u"  ```cpp\n  int indented;\n  ```\n"_s << u"cpp"_s << true
                                     << u"  int indented;\n"_s;
    QTest::newRow("blank lines inside are kept")
        << u"```cpp\nint a;\n\nint b;\n```"_s << u"cpp"_s << true << u"int a;\n\nint b;\n"_s;
    QTest::newRow("tilde fence") << u"~~~cpp\nint t;\n~~~\n"_s << u"cpp"_s << true << u"int t;\n"_s;
}

void TestResponseParser::extractCode()
{
    QFETCH(QString, response);
    QFETCH(QString, language);
    QFETCH(bool, found);
    QFETCH(QString, code);

    const std::optional<QString> extracted = ResponseParser::extractCode(response, language);
    QCOMPARE(extracted.has_value(), found);
    if (found)
        QCOMPARE(*extracted, code);
}

void TestResponseParser::parseMenuChoice_data()
{
    QTest::addColumn<QString>("plan");
    QTest::addColumn<int>("number");
    QTest::addColumn<bool>("isNew");
    QTest::addColumn<QString>("text");

    QTest::newRow("number and text") << u"Chosen optimization: 3. Vectorize the innermost loop\nPlan: ..."_s << 3
                                     << false << Menu.at(2);
    QTest::newRow("number only") << u"Chosen optimization: 2\n\nWe block 4x8."_s << 2 << false << Menu.at(1);
    QTest::newRow("lower case, british spelling")
        << u"chosen optimisation: 4) interchange"_s << 4 << false << Menu.at(3);
    QTest::newRow("bold markdown") << u"**Chosen optimization: 1. Tile the loops for the cache hierarchy**\n..."_s << 1
                                   << false << Menu.at(0);
    QTest::newRow("bold number") << u"Chosen optimization: **3**. Vectorize\n"_s << 3 << false << Menu.at(2);
    QTest::newRow("new idea") << u"Chosen optimization: new. Software prefetching of B rows\nPlan..."_s << 0 << true
                              << u"Software prefetching of B rows"_s;
    QTest::newRow("new idea, capitalised") << u"Chosen optimization: NEW. Huge pages"_s << 0 << true << u"Huge pages"_s;
    QTest::newRow("text without number") << u"Chosen optimization: Register blocking\nDetails"_s << 2 << false
                                         << Menu.at(1);
    QTest::newRow("number out of range falls back to text")
        << u"Chosen optimization: 9. Interchange loops so the innermost loop walks contiguous memory"_s << 4 << false
        << Menu.at(3);
    QTest::newRow("no line, plan quotes a menu item")
        << u"I will apply \"Register blocking\" with a 4x8 tile of accumulators."_s << 2 << false << Menu.at(1);
    QTest::newRow("nothing recognisable") << u"Let us think about the memory hierarchy."_s << 0 << false << QString();
}

void TestResponseParser::parseMenuChoice()
{
    QFETCH(QString, plan);
    QFETCH(int, number);
    QFETCH(bool, isNew);
    QFETCH(QString, text);

    const ResponseParser::MenuChoice choice = ResponseParser::parseMenuChoice(plan, Menu);
    QCOMPARE(choice.number, number);
    QCOMPARE(choice.isNew, isNew);
    QCOMPARE(choice.text, text);
}

namespace {

struct PromptFixture
{
    Agent agent;
    Problem problem;
    Target target;
    Candidate parent;

    PromptFixture()
    {
        agent.name = u"cpu"_s;
        agent.architecture = u"A modern x86-64 core with two FMA ports."_s;
        agent.isaDocs = u"## AVX2\n### _mm256_fmadd_ps"_s;
        agent.menu = Menu;
        agent.rulesGeneral = {u"Keep the signature."_s};
        agent.rulesPlanning = {u"Choose one optimization."_s};
        agent.rulesCoding = {u"Return the whole file."_s};
        problem.name = u"gemm"_s;
        problem.description = u"fp32 C = A * B"_s;
        problem.signature = u"extern \"C\" void gemm(int M, int N, int K, const float* A, const float* B, float* C)"_s;
        problem.context = u"Shapes are not multiples of 8."_s;
        target.name = u"cpu"_s;
        target.language = u"cpp"_s;
        target.metric = u"latency_ms"_s;
        target.metricUnit = u"ms"_s;
        parent.code = u"void gemm() { /* naive */ }"_s;
        parent.score = 12.25;
        parent.metrics = QJsonObject{
            {u"latency_ms"_s, QJsonObject{{u"median"_s, 12.25}, {u"mean"_s, 12.5}, {u"min"_s, 12.0}, {u"n"_s, 57}}},
            {u"gflops"_s, 21.9}};
        parent.feedback = {u"D1 miss rate 23%"_s, u"loop at line 14 not vectorized: data dependence"_s};
    }

    PlanPromptInput input() const
    {
        PlanPromptInput in;
        in.agent = &agent;
        in.problem = &problem;
        in.target = &target;
        in.parent = &parent;
        in.menu = {{1, Menu.at(0)}, {3, Menu.at(2)}};
        in.iteration = 2;
        in.iterations = 8;
        return in;
    }
};

} // namespace

void TestResponseParser::planPromptShowsWhatThePlannerNeeds()
{
    const PromptFixture f;
    const QString prompt = PromptBuilder::planPrompt(f.input());

    // The parent's measured latency with its unit.
    QVERIFY2(prompt.contains(u"12.25 ms"_s), qPrintable(prompt));
    QVERIFY(prompt.contains(u"21.9 GFLOP/s"_s));
    // The menu after dropout, with the numbers of the full menu; dropped items are absent.
    QVERIFY(prompt.contains(u"1. "_s + Menu.at(0)));
    QVERIFY(prompt.contains(u"3. "_s + Menu.at(2)));
    QVERIFY(!prompt.contains(Menu.at(1)));
    QVERIFY(!prompt.contains(Menu.at(3)));
    // Hardware feedback, one line each.
    QVERIFY(prompt.contains(u"- D1 miss rate 23%"_s));
    QVERIFY(prompt.contains(u"- loop at line 14 not vectorized: data dependence"_s));
    QVERIFY(prompt.contains(u"phase 2 out of 8"_s));
    QVERIFY(prompt.contains(f.parent.code));
    QVERIFY(prompt.contains(f.problem.signature));
    QVERIFY(prompt.contains(f.problem.context));
    QVERIFY(prompt.contains(f.agent.architecture));
    QVERIFY(prompt.contains(u"Choose one optimization."_s)); // planning rules
    QVERIFY(!prompt.contains(u"Return the whole file."_s)); // coding rules are not for the planner
    QVERIFY(prompt.contains(u"Chosen optimization:"_s)); // the answer format the parser reads
    QVERIFY(!prompt.contains(u"propose a new optimization"_s)); // not invited this time

    PlanPromptInput invited = f.input();
    invited.inviteNewIdea = true;
    QVERIFY(PromptBuilder::planPrompt(invited).contains(u"propose a new optimization"_s));
}

void TestResponseParser::planPromptIsDeterministic()
{
    // Identical inputs give identical text, so request hashes (the response cache key) are stable.
    const PromptFixture f;
    QCOMPARE(PromptBuilder::planPrompt(f.input()), PromptBuilder::planPrompt(f.input()));
    PlanPromptInput other = f.input();
    other.iteration = 3;
    QVERIFY(PromptBuilder::planPrompt(other) != PromptBuilder::planPrompt(f.input()));
}

void TestResponseParser::planPromptForcedItem()
{
    const PromptFixture f;
    PlanPromptInput in = f.input();
    in.forcedItem = Menu.at(2);
    const QString prompt = PromptBuilder::planPrompt(in);
    QVERIFY(prompt.contains(u"Apply this optimization from the menu: \""_s + Menu.at(2) + u'"'));
    QVERIFY(!prompt.contains(u"Choose exactly one"_s));
}

void TestResponseParser::codeAndFixPrompts()
{
    const PromptFixture f;
    const QString plan = u"Chosen optimization: 1. Tile\nUse 64x64 tiles."_s;
    const QString code = PromptBuilder::codePrompt(f.agent, f.problem, f.target, f.parent.code, plan);
    QVERIFY(code.contains(plan));
    QVERIFY(code.contains(u"```cpp\n"_s + f.parent.code));
    QVERIFY(code.contains(u"Return the whole file."_s));
    QVERIFY(!code.contains(u"Choose one optimization."_s));

    QString log;
    for (int i = 0; i < 200; ++i)
        log += u"x.cpp:%1: error: number %1\n"_s.arg(i);
    const QString fix = PromptBuilder::fixPrompt(f.agent, f.problem, f.target, u"broken("_s, plan, log);
    QVERIFY(fix.contains(u"broken("_s));
    QVERIFY(fix.contains(plan));
    QVERIFY(fix.contains(u"x.cpp:0: error"_s)); // the first error
    QVERIFY(fix.contains(u"x.cpp:199: error"_s)); // and the last
    QVERIFY(!fix.contains(u"x.cpp:100: error"_s)); // the middle is trimmed
}

void TestResponseParser::describeMetrics_data()
{
    QTest::addColumn<QJsonObject>("metrics");
    QTest::addColumn<QString>("primary");
    QTest::addColumn<QString>("expected");

    QTest::newRow("distribution")
        << QJsonObject{{u"latency_ms"_s,
                        QJsonObject{
                            {u"median"_s, 1.23}, {u"mean"_s, 1.25}, {u"min"_s, 1.2}, {u"p99"_s, 1.4}, {u"n"_s, 57}}}}
        << u"latency_ms"_s << u"latency_ms: median 1.23 ms (mean 1.25, min 1.2, p99 1.4, n=57)"_s;
    QTest::newRow("primary first, then others") << QJsonObject{{u"gflops"_s, 88.1}, {u"latency_ms"_s, 2.5}}
                                                << u"latency_ms"_s << u"latency_ms: 2.5 ms; gflops: 88.1 GFLOP/s"_s;
    QTest::newRow("microseconds") << QJsonObject{{u"latency_us"_s, 740.0}} << u"latency_us"_s
                                  << u"latency_us: 740 us"_s;
    QTest::newRow("cycles") << QJsonObject{{u"cycles"_s, 123456.0}} << u"cycles"_s << u"cycles: 123456 cycles"_s;
    QTest::newRow("unitless metric") << QJsonObject{{u"score"_s, 0.5}} << u"score"_s << u"score: 0.5"_s;
    QTest::newRow("non-numeric values skipped") << QJsonObject{{u"latency_ms"_s, 3.0}, {u"note"_s, u"warm cache"_s}}
                                                << u"latency_ms"_s << u"latency_ms: 3 ms"_s;
    QTest::newRow("empty") << QJsonObject{} << u"latency_ms"_s << QString();
}

void TestResponseParser::describeMetrics()
{
    QFETCH(QJsonObject, metrics);
    QFETCH(QString, primary);
    QFETCH(QString, expected);
    QCOMPARE(PromptBuilder::describeMetrics(metrics, primary), expected);
}

void TestResponseParser::trimLogCutsLongLines()
{
    const QString longLine = QString(1000, u'a');
    const QString log = u"short line\n"_s + longLine + u"\nlast line"_s;
    const QString trimmed = PromptBuilder::trimLog(log);
    const QStringList lines = trimmed.split(u'\n');
    QCOMPARE(lines.size(), 3);
    QCOMPARE(lines.at(0), u"short line"_s);
    QVERIFY(lines.at(1).startsWith(QString(400, u'a')));
    QVERIFY(!lines.at(1).contains(QString(401, u'a')));
    QVERIFY(lines.at(1).size() < 420);
    QCOMPARE(lines.at(2), u"last line"_s);
}

void TestResponseParser::trimLogKeepsHeadAndTail()
{
    QStringList lines;
    for (int i = 0; i < 500; ++i)
        lines << u"line %1"_s.arg(i);
    const QString trimmed = PromptBuilder::trimLog(lines.join(u'\n'), 400, 80);
    const QStringList out = trimmed.split(u'\n');
    QVERIFY(out.size() <= 81);
    QCOMPARE(out.first(), u"line 0"_s);
    QVERIFY(out.contains(u"line 39"_s));
    QCOMPARE(out.last(), u"line 499"_s);
    QVERIFY(out.contains(u"line 460"_s));
    QVERIFY(!out.contains(u"line 250"_s));
    QVERIFY2(trimmed.contains(u"420 lines omitted"_s), qPrintable(trimmed));
}

void TestResponseParser::trimLogLeavesShortLogsAlone()
{
    const QString log = u"a.cpp:1: error: x\na.cpp:2: note: y"_s;
    QCOMPARE(PromptBuilder::trimLog(log), log);
}

QTEST_GUILESS_MAIN(TestResponseParser)
#include "tst_response_parser.moc"
