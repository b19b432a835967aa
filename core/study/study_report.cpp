#include "study/study_report.h"

#include "insights/menu_insights.h"
#include "store/run_store.h"

#include <QSet>

#include <algorithm>

namespace autocomp {

QList<int> StudyReport::paretoFront(const QList<ParetoPoint> &points)
{
    QList<int> front;
    for (qsizetype i = 0; i < points.size(); ++i) {
        const ParetoPoint &p = points.at(i);
        if (std::isnan(p.quality) || std::isnan(p.cost))
            continue;
        bool dominated = false;
        for (qsizetype j = 0; j < points.size() && !dominated; ++j) {
            const ParetoPoint &q = points.at(j);
            if (j == i || std::isnan(q.quality) || std::isnan(q.cost))
                continue;
            dominated = q.quality <= p.quality && q.cost <= p.cost && (q.quality < p.quality || q.cost < p.cost);
        }
        if (!dominated)
            front << int(i);
    }
    return front;
}

QHash<QString, RunInfo> StudyReport::runsByLabel(RunStore &store, const QString &studyName)
{
    QHash<QString, RunInfo> byLabel;
    for (const RunInfo &run : store.runs()) {
        const auto label = StudyLabel::parse(run.label);
        if (!label || label->study != studyName)
            continue;
        const auto it = byLabel.constFind(run.label);
        if (it == byLabel.cend() || it->id < run.id)
            byLabel.insert(run.label, run);
    }
    return byLabel;
}

QStringList StudyReport::studyNames(RunStore &store)
{
    QSet<QString> names;
    for (const RunInfo &run : store.runs())
        if (const auto label = StudyLabel::parse(run.label))
            names.insert(label->study);
    QStringList sorted(names.cbegin(), names.cend());
    sorted.sort();
    return sorted;
}

namespace {

bool isVerdict(CandidateStatus status)
{
    return status == CandidateStatus::Correct || status == CandidateStatus::Incorrect
        || status == CandidateStatus::CompileError || status == CandidateStatus::Failed;
}

StudyRunResult resultOf(RunStore &store, const RunInfo &run)
{
    StudyRunResult r;
    r.runId = run.id;
    r.state = store.displayState(run);
    r.stopReason = run.stopReason.section(QLatin1Char('\n'), 0, 0);
    r.iterations = run.iteration;
    r.tokensIn = run.tokensIn;
    r.tokensOut = run.tokensOut;
    r.usd = run.usd;
    r.llmCalls = run.llmCalls;
    if (run.createdAt.isValid() && run.updatedAt.isValid())
        r.wallSeconds = std::max<qint64>(0, run.createdAt.msecsTo(run.updatedAt)) / 1000.0;
    const QList<Candidate> candidates = store.candidates(run.id);
    int lastIteration = run.iteration;
    for (const Candidate &c : candidates)
        lastIteration = std::max(lastIteration, c.iteration);
    r.bestPerIteration = QList<double>(lastIteration + 1, std::numeric_limits<double>::quiet_NaN());
    for (const Candidate &c : candidates) {
        if (c.origin == CandidateOrigin::Root) {
            if (c.status == CandidateStatus::Correct && c.hasScore())
                r.baselineScore = c.score;
        } else if (isVerdict(c.status)) {
            ++r.verdicts;
            if (c.status == CandidateStatus::Correct)
                ++r.correct;
        }
        if (c.status == CandidateStatus::Correct && c.hasScore()) {
            double &slot = r.bestPerIteration[c.iteration];
            slot = std::isnan(slot) ? c.score : std::min(slot, c.score);
        }
    }
    // Best so far: each iteration keeps the best of those before it.
    for (qsizetype i = 1; i < r.bestPerIteration.size(); ++i) {
        const double before = r.bestPerIteration.at(i - 1);
        double &now = r.bestPerIteration[i];
        if (!std::isnan(before) && (std::isnan(now) || before < now))
            now = before;
    }
    if (!r.bestPerIteration.isEmpty())
        r.bestScore = r.bestPerIteration.constLast();
    for (const StrategyRecord &record : MenuInsights::compute(store, {run.id}, MenuInsights::Grouping::Strategy))
        if (record.enteredBeam > 0)
            ++r.beamStrategies;
    return r;
}

} // namespace

QList<StudyRunResult> StudyReport::results(RunStore &store, const StudyConfig &study)
{
    const QHash<QString, RunInfo> byLabel = runsByLabel(store, study.name);
    QList<StudyRunResult> out;
    for (const StudyRun &planned : study.runs) {
        StudyRunResult r;
        if (const auto it = byLabel.constFind(planned.label); it != byLabel.cend())
            r = resultOf(store, *it);
        else
            r.state = QStringLiteral("not started");
        r.problem = planned.problemName();
        r.point = planned.point;
        r.seed = planned.seed;
        out << r;
    }
    return out;
}

QList<StudyRunResult> StudyReport::results(RunStore &store, const QString &studyName)
{
    const QHash<QString, RunInfo> byLabel = runsByLabel(store, studyName);
    QList<RunInfo> runs = byLabel.values();
    std::sort(runs.begin(), runs.end(), [](const RunInfo &a, const RunInfo &b) { return a.id < b.id; });
    QStringList problems;
    QList<StudyPoint> points;
    QList<StudyRunResult> out;
    for (const RunInfo &run : std::as_const(runs)) {
        const auto label = StudyLabel::parse(run.label);
        StudyRunResult r = resultOf(store, run);
        r.problem = label->problem;
        r.point = label->point();
        r.seed = label->seed;
        if (!problems.contains(r.problem))
            problems << r.problem;
        if (!points.contains(r.point))
            points << r.point;
        out << r;
    }
    std::stable_sort(out.begin(), out.end(), [&](const StudyRunResult &a, const StudyRunResult &b) {
        const auto ka = std::make_tuple(problems.indexOf(a.problem), points.indexOf(a.point), a.seed);
        const auto kb = std::make_tuple(problems.indexOf(b.problem), points.indexOf(b.point), b.seed);
        return ka < kb;
    });
    return out;
}

bool StudyReport::costInTokens(const QList<StudyRunResult> &results, const QString &problem)
{
    return std::none_of(results.cbegin(), results.cend(),
                        [&](const StudyRunResult &r) { return r.problem == problem && r.runId && r.usd > 0; });
}

QList<StudyPointSummary> StudyReport::summarize(const QList<StudyRunResult> &results)
{
    QList<StudyPointSummary> out;
    for (const StudyRunResult &r : results) {
        auto it = std::find_if(out.begin(), out.end(), [&](const StudyPointSummary &s) {
            return s.problem == r.problem && s.point == r.point;
        });
        if (it == out.end()) {
            StudyPointSummary s;
            s.problem = r.problem;
            s.point = r.point;
            out << s;
            it = out.end() - 1;
        }
        ++it->planned;
    }
    for (StudyPointSummary &s : out) {
        double bestSum = 0;
        int withBest = 0;
        double wallSum = 0;
        double beamSum = 0;
        int verdicts = 0;
        int correct = 0;
        QList<double> perIterationSum;
        QList<int> perIterationCount;
        for (const StudyRunResult &r : results) {
            if (r.problem != s.problem || !(r.point == s.point) || r.runId == 0)
                continue;
            ++s.runs;
            s.ended += r.ended() ? 1 : 0;
            s.tokens += r.tokens();
            s.usd += r.usd;
            s.llmCalls += r.llmCalls;
            wallSum += r.wallSeconds;
            beamSum += r.beamStrategies;
            verdicts += r.verdicts;
            correct += r.correct;
            if (!std::isnan(r.bestScore)) {
                bestSum += r.bestScore;
                ++withBest;
            }
            for (qsizetype i = 0; i < r.bestPerIteration.size(); ++i) {
                if (perIterationSum.size() <= i) {
                    perIterationSum << 0;
                    perIterationCount << 0;
                }
                if (!std::isnan(r.bestPerIteration.at(i))) {
                    perIterationSum[i] += r.bestPerIteration.at(i);
                    ++perIterationCount[i];
                }
            }
        }
        if (withBest > 0)
            s.meanBest = bestSum / withBest;
        for (qsizetype i = 0; i < perIterationSum.size(); ++i)
            s.meanBestPerIteration << (perIterationCount.at(i) > 0 ? perIterationSum.at(i) / perIterationCount.at(i)
                                                                   : std::numeric_limits<double>::quiet_NaN());
        if (s.runs > 0) {
            s.meanUsd = s.usd / s.runs;
            s.meanTokens = double(s.tokens) / s.runs;
            s.meanWallSeconds = wallSum / s.runs;
            s.meanBeamStrategies = beamSum / s.runs;
        }
        if (verdicts > 0)
            s.correctRate = double(correct) / verdicts;
    }
    // The front, per problem: latencies of different problems do not compare.
    QStringList problems;
    for (const StudyPointSummary &s : std::as_const(out))
        if (!problems.contains(s.problem))
            problems << s.problem;
    for (const QString &problem : std::as_const(problems)) {
        const bool tokens = costInTokens(results, problem);
        QList<int> indexes;
        QList<ParetoPoint> points;
        for (qsizetype i = 0; i < out.size(); ++i) {
            if (out.at(i).problem != problem)
                continue;
            indexes << int(i);
            const StudyPointSummary &s = out.at(i);
            points << ParetoPoint{s.meanBest,
                                  s.runs > 0 ? (tokens ? s.meanTokens : s.meanUsd)
                                             : std::numeric_limits<double>::quiet_NaN()};
        }
        for (int f : paretoFront(points))
            out[indexes.at(f)].onFront = true;
    }
    return out;
}

namespace {

QString csvField(const QString &text)
{
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n')))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QString number(double value, int precision = 6)
{
    return std::isnan(value) ? QString() : QString::number(value, 'g', precision);
}

QStringList varyKeys(const QList<StudyPoint> &points)
{
    QStringList keys;
    for (const StudyPoint &p : points)
        for (const auto &[key, value] : p.values)
            if (!keys.contains(key))
                keys << key;
    return keys;
}

QString valueOf(const StudyPoint &point, const QString &key)
{
    for (const auto &[k, v] : point.values)
        if (k == key)
            return v;
    return {};
}

QString row(const QStringList &fields)
{
    QStringList quoted;
    for (const QString &f : fields)
        quoted << csvField(f);
    return quoted.join(QLatin1Char(',')) + QStringLiteral("\r\n");
}

} // namespace

QString StudyReport::runsCsv(const QString &studyName, const QList<StudyRunResult> &results)
{
    QList<StudyPoint> points;
    for (const StudyRunResult &r : results)
        points << r.point;
    const QStringList keys = varyKeys(points);
    QString csv = row(QStringList{QStringLiteral("study"), QStringLiteral("problem")} + keys
                      + QStringList{QStringLiteral("seed"), QStringLiteral("run_id"), QStringLiteral("state"),
                                    QStringLiteral("stop_reason"), QStringLiteral("iterations"),
                                    QStringLiteral("baseline"), QStringLiteral("best"), QStringLiteral("speedup"),
                                    QStringLiteral("best_per_iteration"), QStringLiteral("tokens_in"),
                                    QStringLiteral("tokens_out"), QStringLiteral("usd"), QStringLiteral("llm_calls"),
                                    QStringLiteral("wall_s"), QStringLiteral("verdicts"), QStringLiteral("correct"),
                                    QStringLiteral("correct_rate"), QStringLiteral("beam_strategies")});
    for (const StudyRunResult &r : results) {
        QStringList fields{studyName, r.problem};
        for (const QString &key : keys)
            fields << valueOf(r.point, key);
        QStringList perIteration;
        for (double v : r.bestPerIteration)
            perIteration << number(v);
        const double speedup = !std::isnan(r.bestScore) && r.bestScore > 0 ? r.baselineScore / r.bestScore
                                                                           : std::numeric_limits<double>::quiet_NaN();
        fields << QString::number(r.seed) << (r.runId ? QString::number(r.runId) : QString()) << r.state << r.stopReason
               << QString::number(r.iterations) << number(r.baselineScore) << number(r.bestScore) << number(speedup, 4)
               << perIteration.join(QLatin1Char(';')) << QString::number(r.tokensIn) << QString::number(r.tokensOut)
               << QString::number(r.usd, 'f', 6) << QString::number(r.llmCalls)
               << QString::number(r.wallSeconds, 'f', 1) << QString::number(r.verdicts) << QString::number(r.correct)
               << number(r.correctRate(), 4) << QString::number(r.beamStrategies);
        csv += row(fields);
    }
    return csv;
}

QString StudyReport::pointsCsv(const QString &studyName, const QList<StudyPointSummary> &points)
{
    QList<StudyPoint> all;
    for (const StudyPointSummary &s : points)
        all << s.point;
    const QStringList keys = varyKeys(all);
    QString csv = row(QStringList{QStringLiteral("study"), QStringLiteral("problem")} + keys
                      + QStringList{QStringLiteral("runs"), QStringLiteral("ended"), QStringLiteral("planned"),
                                    QStringLiteral("mean_best"), QStringLiteral("mean_best_per_iteration"),
                                    QStringLiteral("tokens"), QStringLiteral("usd"), QStringLiteral("llm_calls"),
                                    QStringLiteral("mean_usd"), QStringLiteral("mean_tokens"),
                                    QStringLiteral("mean_wall_s"), QStringLiteral("correct_rate"),
                                    QStringLiteral("mean_beam_strategies"), QStringLiteral("on_front")});
    for (const StudyPointSummary &s : points) {
        QStringList fields{studyName, s.problem};
        for (const QString &key : keys)
            fields << valueOf(s.point, key);
        QStringList perIteration;
        for (double v : s.meanBestPerIteration)
            perIteration << number(v);
        fields << QString::number(s.runs) << QString::number(s.ended) << QString::number(s.planned)
               << number(s.meanBest) << perIteration.join(QLatin1Char(';')) << QString::number(s.tokens)
               << QString::number(s.usd, 'f', 6) << QString::number(s.llmCalls) << QString::number(s.meanUsd, 'f', 6)
               << QString::number(s.meanTokens, 'f', 0) << QString::number(s.meanWallSeconds, 'f', 1)
               << number(s.correctRate, 4) << QString::number(s.meanBeamStrategies, 'f', 2)
               << (s.onFront ? QStringLiteral("yes") : QStringLiteral("no"));
        csv += row(fields);
    }
    return csv;
}

QString StudyReport::pointsTable(const QList<StudyPointSummary> &points, const QList<StudyRunResult> &results)
{
    QString out;
    const auto pad = [](const QString &text, int width) -> QString {
        return text.leftJustified(width, QLatin1Char(' '), false) + QLatin1Char(' ');
    };
    QString problem;
    for (const StudyPointSummary &s : points) {
        if (s.problem != problem) {
            problem = s.problem;
            const bool tokens = costInTokens(results, problem);
            out += QStringLiteral("\n%1 (front: lowest mean best score against mean %2 per run)\n")
                       .arg(problem, tokens ? QStringLiteral("tokens") : QStringLiteral("$"));
            out += pad(QStringLiteral("point"), 24) + pad(QStringLiteral("runs"), 5)
                + pad(QStringLiteral("best/iteration (mean)"), 34) + pad(QStringLiteral("tokens"), 9)
                + pad(QStringLiteral("$"), 9) + pad(QStringLiteral("calls"), 6) + pad(QStringLiteral("wall s"), 7)
                + pad(QStringLiteral("correct"), 8) + pad(QStringLiteral("beam strat."), 11)
                + QStringLiteral("front\n");
        }
        QStringList perIteration;
        for (double v : s.meanBestPerIteration)
            perIteration << number(v, 4);
        out += pad(s.point.name(), 24) + pad(QStringLiteral("%1/%2").arg(s.ended).arg(s.planned), 5)
            + pad(perIteration.join(QLatin1Char(' ')), 34) + pad(QString::number(s.tokens), 9)
            + pad(QString::number(s.usd, 'f', 4), 9) + pad(QString::number(s.llmCalls), 6)
            + pad(QString::number(s.meanWallSeconds, 'f', 1), 7)
            + pad(std::isnan(s.correctRate) ? QStringLiteral("-")
                                            : QStringLiteral("%1%").arg(qRound(s.correctRate * 100)),
                  8)
            + pad(QString::number(s.meanBeamStrategies, 'f', 1), 11) + (s.onFront ? QStringLiteral("*") : QString())
            + QLatin1Char('\n');
    }
    return out;
}

} // namespace autocomp
