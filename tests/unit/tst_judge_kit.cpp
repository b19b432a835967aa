// The C/C++ judge kit's modules (backends/common/include/autocomp/) on their own: comparison (an element
// never written told apart from a NaN the kernel computed), result.json always valid JSON, untrusted reads
// (truncation said, links refused), the statistics and the paired ABBA rounds, the mode table's exit
// statuses, and random shapes. The judges built from them are exercised end to end by tst_cpu_problems,
// tst_rvv, tst_targets_check and tst_reward_hacking.
#include "autocomp/compare.h"
#include "autocomp/modes.h"
#include "autocomp/result.h"
#include "autocomp/shapes.h"
#include "autocomp/stats.h"
#include "autocomp/timing.h"
#include "autocomp/untrusted_io.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <limits>

using namespace autocomp;

namespace {

// A problem as the kit's templates see one: keys, make_inputs, outputs.
struct ToyProblem
{
    std::vector<std::string> keys{"n", "k"};
    Buffers make_inputs(const Shape &s, Rng &rng) const
    {
        if (s["k"] > s["n"])
            throw std::runtime_error("k larger than n");
        return {uniform(s["n"], rng)};
    }
    std::vector<Dims> outputs(const Shape &s) const { return {{s["n"]}}; }
};

} // namespace

class TestJudgeKit : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void compareTellsUnwrittenFromComputedNan()
    {
        const kit::Tolerance tol = kit::parse_tolerance("rtol=0,atol=0.5");
        const Buffer ref{1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
        const float got[] = {1.2f, kit::poison_value(), std::numeric_limits<float>::quiet_NaN(),
                             std::numeric_limits<float>::infinity(), 9.0f};
        const kit::Comparison c = kit::compare(got, ref, tol, {5});
        QCOMPARE(c.checked, std::size_t(5));
        QCOMPARE(c.bad, std::size_t(4));
        QCOMPARE(c.unwritten, std::size_t(1));
        QCOMPARE(c.computed_nan, std::size_t(1));
        QCOMPARE(c.infinite, std::size_t(1));
        const QString text = QString::fromStdString(
            kit::describe_failure("toy", parse_shape("n=5"), "input set 0", 0, c, tol, {5}));
        QVERIFY2(text.contains(QLatin1String("4 of 5 elements")), qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("1 elements were never written")), qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("at [1]: got (never written)")), qPrintable(text));
        // The worst element is named when it holds a value (here the poison, first, is worse than any).
        QVERIFY2(!text.contains(QLatin1String("worst element")), qPrintable(text));
        const float off[] = {1.2f, 2.0f, 3.0f, 4.0f, 9.0f};
        const kit::Comparison one = kit::compare(off, ref, tol, {5});
        QCOMPARE(one.bad, std::size_t(1));
        const QString oneText = QString::fromStdString(
            kit::describe_failure("toy", parse_shape("n=5"), "input set 1", 0, one, tol, {5}));
        QVERIFY2(oneText.contains(QLatin1String("worst element [4]: got 9, expected 5")), qPrintable(oneText));
        // Another target's poison pattern: the same NaN is then one the kernel computed.
        const kit::Comparison other = kit::compare(got, ref, tol, {5}, 0xFFFFFFFFu);
        QCOMPARE(other.unwritten, std::size_t(0));
        QCOMPARE(other.computed_nan, std::size_t(2));
        // Within tolerance: nothing bad.
        const float close[] = {1.4f, 2.0f, 2.6f, 4.0f, 5.0f};
        QVERIFY(kit::compare(close, ref, tol, {5}).ok());
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, kit::parse_tolerance("rtol=1,eps=2"));
    }

    void resultIsValidJsonWhateverTheText()
    {
        const std::string invalidUtf8 = std::string("bad \xff\xfe byte, control \x01, quote \" and ") + "\xc3\xa9"
            + " (e acute), \xe2\x80\x94 dash";
        const std::string text = kit::result_json(
            "incorrect", false, {{"latency_ms", kit::json_number(1.5)}, {"nan", kit::json_number(std::nan(""))}},
            {"feedback " + invalidUtf8}, {"flag"}, "log\n" + invalidUtf8);
        QJsonParseError error;
        const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(text), &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError,
                 qPrintable(error.errorString() + QStringLiteral(": ") + QString::fromStdString(text)));
        QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("incorrect"));
        QCOMPARE(o.value(QStringLiteral("correct")).toBool(true), false);
        QCOMPARE(o.value(QStringLiteral("metrics")).toObject().value(QStringLiteral("latency_ms")).toDouble(), 1.5);
        QVERIFY(o.value(QStringLiteral("metrics")).toObject().value(QStringLiteral("nan")).isNull());
        QCOMPARE(o.value(QStringLiteral("flags")).toArray().first().toString(), QStringLiteral("flag"));
        const QString log = o.value(QStringLiteral("log")).toString();
        QVERIFY2(log.startsWith(QStringLiteral("log\nbad ?? byte, control \x01, quote \" and ")), qPrintable(log));
        QVERIFY2(log.contains(QStringLiteral("\u00e9 (e acute), \u2014 dash")), qPrintable(log));
    }

    void readUntrustedSaysTruncationAndRefusesLinks()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("out.txt"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("0123456789");
        f.close();
        bool truncated = true;
        QCOMPARE(kit::read_untrusted(path.toStdString(), 10, &truncated), std::string("0123456789"));
        QVERIFY(!truncated);
        QCOMPARE(kit::read_untrusted(path.toStdString(), 4, &truncated), std::string("0123"));
        QVERIFY(truncated);
        const QString link = dir.filePath(QStringLiteral("link.txt"));
        QVERIFY(QFile::link(path, link));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, kit::read_untrusted(link.toStdString()));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, kit::read_untrusted(dir.path().toStdString()));
        QCOMPARE(kit::quote_untrusted("a\x01"
                                      "b",
                                      10),
                 std::string("a?b"));
        QCOMPARE(kit::quote_untrusted("abcdef", 3), std::string("abc [...]"));
    }

    void statistics()
    {
        const kit::Stats s = kit::stats({4, 1, 3, 2});
        QCOMPARE(s.n, std::size_t(4));
        QCOMPARE(s.median, 2.5);
        QCOMPARE(s.min, 1.0);
        QCOMPARE(s.p99, 4.0);
        QCOMPARE(s.mean, 2.5);
        QVERIFY(std::fabs(s.stddev - std::sqrt(5.0 / 3.0)) < 1e-12);
        // 25 ratios 0.76 ... 1.24: median 1.0, the interval at ranks floor(12.5 - 4.9) - 1 = 6 and ceil(12.5 + 4.9)
        // = 18.
        std::vector<double> r;
        for (int i = 0; i < 25; ++i)
            r.push_back(0.76 + 0.02 * i);
        const kit::RatioEstimate e = kit::median_interval(r);
        QVERIFY(std::fabs(e.value - 1.0) < 1e-12);
        QVERIFY(std::fabs(e.low - r[6]) < 1e-12);
        QVERIFY(std::fabs(e.high - r[18]) < 1e-12);
        QCOMPARE(kit::median_interval({}).n, std::size_t(0));
    }

    void pairedRounds()
    {
        QCOMPARE(kit::calls_per_batch(0.3, 2.0, 1000), std::size_t(7));
        // Too short to see (a cost estimate took all of it): the most calls, never a batch of one.
        QCOMPARE(kit::calls_per_batch(0.0, 2.0, 1000), std::size_t(1000));
        QCOMPARE(kit::calls_per_batch(-1.0, 2.0, 1000), std::size_t(1000));
        QCOMPARE(kit::calls_per_batch(1e-300, 2.0, 1000), std::size_t(1000));
        QCOMPARE(kit::calls_per_batch(1e-6, 2.0, 50), std::size_t(50));
        QCOMPARE(kit::calls_per_batch(10.0, 2.0, 1000), std::size_t(1));

        // The protocol's estimated cost comes off a batch, but never more than 1 % of it: a cost measured
        // in a bad moment cannot shrink a 3.1 ms batch to nothing.
        QCOMPARE(kit::net_batch_ns(2.0e6, 3500.0), 2.0e6 - 3500.0);
        QCOMPARE(kit::net_batch_ns(3.1e6, 3.0e6), 3.1e6 * (1 - kit::kMaxOverheadShare));
        QCOMPARE(kit::net_batch_ns(1000.0, -5.0), 1000.0);
        QCOMPARE(kit::net_batch_ns(0.0, 3500.0), 0.0);

        kit::Rounds rounds(2, 6, 400, 0.005);
        QVERIFY(rounds.paired());
        QCOMPARE(rounds.arm(0, 0), std::size_t(0));
        QCOMPARE(rounds.arm(0, 1), std::size_t(1));
        QCOMPARE(rounds.arm(1, 0), std::size_t(1));
        QCOMPARE(rounds.arm(1, 1), std::size_t(0));
        QCOMPARE(rounds.recent_min(0), 0.0);
        // A candidate exactly half the baseline's time: every ratio 0.5, converged once the minimum is reached.
        for (std::size_t round = 0; round < 6; ++round) {
            rounds.add(rounds.arm(round, 0), rounds.arm(round, 0) == 0 ? 1.0 : 2.0);
            rounds.add(rounds.arm(round, 1), rounds.arm(round, 1) == 0 ? 1.0 : 2.0);
            rounds.end_round();
            QCOMPARE(rounds.done(round, 0.0, 1e9), round == 5);
        }
        QCOMPARE(rounds.ratios().size(), std::size_t(6));
        QCOMPARE(rounds.ratio().value, 0.5);
        QCOMPARE(rounds.recent_min(1), 2.0);

        // Noisy ratios do not converge: only the budget or the round limit ends the timing.
        kit::Rounds noisy(2, 6, 10, 0.005);
        for (std::size_t round = 0; round < 8; ++round) {
            noisy.add(0, round % 2 ? 1.0 : 3.0);
            noisy.add(1, 2.0);
            noisy.end_round();
        }
        QVERIFY(!noisy.done(7, 100.0, 1000.0));
        QVERIFY(noisy.done(7, 1001.0, 1000.0));
        QVERIFY(noisy.done(9, 0.0, 1000.0));
    }

    void modeTableExitStatuses()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string result = dir.filePath(QStringLiteral("result.json")).toStdString();
        struct Wrong : kit::CandidateFailure
        {
            using kit::CandidateFailure::CandidateFailure;
            kit::Verdict verdict() const override { return {"rejected", {"a flag"}, what()}; }
        };
        const kit::ModeTable modes{
            {"pass", [](const kit::Args &) { return 0; }},
            {"wrong", [](const kit::Args &) -> int { throw Wrong("WRONG: the reason"); }},
            {"fault", [](const kit::Args &a) -> int { return a.need("absent").empty() ? 0 : 1; }}};
        const auto run = [&](std::vector<std::string> words) {
            std::vector<char *> argv;
            for (auto &w : words)
                argv.push_back(w.data());
            return kit::run_modes(static_cast<int>(argv.size()), argv.data(), modes, "test judge", "toy");
        };
        QCOMPARE(run({"judge", "pass", "--result", result}), 0);
        QVERIFY(!QFile::exists(QString::fromStdString(result)));
        QCOMPARE(run({"judge", "wrong", "--result", result}), 1);
        QFile file(QString::fromStdString(result));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject o = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("rejected"));
        QCOMPARE(o.value(QStringLiteral("log")).toString(), QStringLiteral("WRONG: the reason"));
        QCOMPARE(o.value(QStringLiteral("flags")).toArray().first().toString(), QStringLiteral("a flag"));
        QCOMPARE(run({"judge", "fault", "--result", result}), 2); // a missing option: the harness's fault
        QCOMPARE(run({"judge", "no-such-mode"}), 2);
        QCOMPARE(run({"judge", "pass", "--result"}), 2); // options come in pairs
        QCOMPARE(run({"judge", "pass", "result", "x"}), 2); // and start with --
    }

    void randomShapesAreAcceptedAndReproducible()
    {
        const ToyProblem p;
        const auto shapes = kit::random_shapes(p, "n=1:50,k=1:50", 8, 42, 4);
        QCOMPARE(shapes.size(), std::size_t(8));
        for (const Shape &s : shapes) {
            QVERIFY(s["n"] >= 1 && s["n"] <= 50);
            QVERIFY2(s["k"] <= s["n"], s.text().c_str()); // make_inputs refuses the others
        }
        const auto again = kit::random_shapes(p, "n=1:50,k=1:50", 8, 42, 4);
        for (std::size_t i = 0; i < shapes.size(); ++i)
            QCOMPARE(again[i].text(), shapes[i].text());
        QVERIFY(kit::random_shapes(p, "n=1:50", 4, 42, 4).empty()); // no range for k: nothing drawn
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, kit::random_shapes(p, "n=5", 2, 42, 4));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, kit::shapes_for(p, "n=5"));
        QCOMPARE(kit::shapes_for(p, "n=5,k=2;n=7,k=7").size(), std::size_t(2));
    }
};

QTEST_GUILESS_MAIN(TestJudgeKit)
#include "tst_judge_kit.moc"
