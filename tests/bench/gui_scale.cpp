// The main window on a run of 10,000 candidates: time to open it with the tree, the graph and the chart
// populated, peak memory, and the longest stall of the GUI thread while 200 candidates per second stream
// into the views through their upsert paths (with the graph, the tree and then the chart in front).
//
// Then another connection (a thread with a RunStore of its own, as another process) writes 200 candidate
// events per second into the shown run, and the window follows the store (StoreFollower): the longest stall
// then, and how long a committed candidate takes to reach the views (commit -> applied; painted next frame).
//
// First, the graph of a 200-candidate run as a 1280x800 window opens it: its scale, a node's box on screen, how
// many candidates have a box of their own (collapsed groups hide the rest) and how many are in view.
//
// Figures, one per line: graph200_scale, graph200_node_box_px, open_s, chart_tab_s, peak_rss_mb, max_stall_graph_ms,
// max_stall_tree_ms, max_stall_chart_ms, max_stall_external_writer_ms, max_stall_ms, refresh_latency_p50_ms,
// refresh_latency_p95_ms. Targets: open <= 1.5 s, memory <= 400 MB, no stall over 50 ms, refresh latency p50 <= 500 ms.
#include "charts/beam_graph_view.h"
#include "models/candidate_tree_model.h"
#include "editors/diff_view.h"
#include "charts/latency_chart.h"
#include "frame/main_window.h"
#include "models/run_list_model.h"
#include "store/run_store.h"
#include "store/store_follower.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFontMetrics>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QTreeView>
#include <QWindow>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include <time.h>

using namespace autocomp;

namespace {

constexpr int s_candidates = 10000;
constexpr int s_iterations = 8;
constexpr int s_beamWidth = 4;
constexpr int s_streamPerSecond = 200;
constexpr int s_streamSeconds = 5;

double peakRssMb()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmHWM:"))
            return line.mid(6).trimmed().split(' ').first().toDouble() / 1024.0;
    return -1;
}

// About 1.5 KB of kernel code, different per candidate.
QString codeFor(qint64 id)
{
    QString code = QStringLiteral("// candidate %1\n#include <immintrin.h>\n").arg(id);
    for (int i = 0; i < 24; ++i)
        code += QStringLiteral("    acc[%1] = _mm256_fmadd_ps(a%2, b%3, acc[%1]); // step %4\n")
                    .arg(i % 8)
                    .arg(i)
                    .arg(id % 97)
                    .arg(i);
    return code;
}

struct Generated
{
    qint64 runId = 0;
    int evaluated = 0;
};

// A finished run of `candidates` over `iterations`, a beam of `beamWidth`: 15 % compile errors, 10 % incorrect, 5 %
// failed.
bool generate(const QString &path, Generated *out, int candidates = s_candidates, int iterations = s_iterations)
{
    QString error;
    {
        std::unique_ptr<RunStore> store = RunStore::open(path, &error);
        if (!store) {
            std::fprintf(stderr, "gui_scale: %s\n", qPrintable(error));
            return false;
        }
        RunInfo run;
        run.target = QStringLiteral("cpu");
        run.problem = QStringLiteral("gemm");
        run.agent = QStringLiteral("cpu");
        run.state = RunState::Finished;
        run.metric = QStringLiteral("latency_ms");
        run.iteration = iterations;
        run.createdAt = QDateTime::currentDateTimeUtc();
        out->runId = store->createRun(run);
    }

    // One transaction on the schema RunStore created: 10,000 single-row transactions would take minutes.
    QRandomGenerator random(1111);
    struct Row
    {
        qint64 id, parent;
        int iteration;
        QString status;
        double score;
        bool inBeam;
    };
    QList<Row> rows;
    rows.append({1, 0, 0, QStringLiteral("correct"), 250.0, false});
    QList<qint64> beam{1};
    QHash<qint64, double> scoreOf{{1, 250.0}};
    const int perIteration = (candidates - 1) / iterations;
    qint64 nextId = 2;
    for (int iteration = 1; iteration <= iterations; ++iteration) {
        QList<std::pair<double, qint64>> correct;
        const int count = iteration == iterations ? candidates - int(rows.size()) : perIteration;
        for (int i = 0; i < count; ++i) {
            const qint64 parent = beam.at(i % beam.size());
            const double roll = random.generateDouble();
            Row row{nextId++, parent, iteration, QStringLiteral("correct"), 0, false};
            if (roll < 0.15) {
                row.status = QStringLiteral("compile_error");
            } else if (roll < 0.25) {
                row.status = QStringLiteral("incorrect");
            } else if (roll < 0.3) {
                row.status = QStringLiteral("failed");
            } else {
                row.score = scoreOf.value(parent) * (0.6 + 0.6 * random.generateDouble());
                scoreOf.insert(row.id, row.score);
                correct.append({row.score, row.id});
            }
            rows.append(row);
        }
        std::sort(correct.begin(), correct.end());
        beam.clear();
        for (int i = 0; i < std::min<qsizetype>(s_beamWidth, correct.size()); ++i)
            beam.append(correct.at(i).second);
    }
    qint64 best = 1;
    for (const Row &row : rows)
        if (row.score > 0 && row.score < scoreOf.value(best))
            best = row.id;
    for (Row &row : rows)
        row.inBeam = beam.contains(row.id);

    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("gui_scale_bulk"));
        db.setDatabaseName(path);
        if (!db.open() || !db.transaction()) {
            std::fprintf(stderr, "gui_scale: %s\n", qPrintable(db.lastError().text()));
            return false;
        }
        QSqlQuery q(db);
        q.prepare(QStringLiteral(
            "INSERT INTO candidates (id, run_id, parent_id, iteration, origin, status, plan, menu_item, code, score, "
            "metrics, feedback, in_beam, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?)"));
        const QString now = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
        const QStringList menu = {QStringLiteral("loop tiling"), QStringLiteral("vectorize the inner loop"),
                                  QStringLiteral("register blocking"), QStringLiteral("unroll k"),
                                  QStringLiteral("prefetch B")};
        for (const Row &row : std::as_const(rows)) {
            const bool isRoot = row.parent == 0;
            const QJsonObject metrics = row.score > 0
                ? QJsonObject{{QStringLiteral("latency_ms"), QJsonObject{{QStringLiteral("median"), row.score}}},
                              {QStringLiteral("vendor_latency_ms"), 3.5}}
                : QJsonObject{};
            q.addBindValue(row.id);
            q.addBindValue(out->runId);
            q.addBindValue(isRoot ? QVariant() : QVariant(row.parent));
            q.addBindValue(row.iteration);
            q.addBindValue(isRoot ? QStringLiteral("root") : QStringLiteral("llm"));
            q.addBindValue(row.status);
            q.addBindValue(isRoot ? QStringLiteral("")
                                  : QStringLiteral("Apply %1 to the parent.").arg(menu.at(row.id % menu.size())));
            q.addBindValue(isRoot ? QStringLiteral("") : menu.at(row.id % menu.size()));
            q.addBindValue(codeFor(row.id));
            q.addBindValue(row.score > 0 ? QVariant(row.score) : QVariant());
            q.addBindValue(QString::fromUtf8(QJsonDocument(metrics).toJson(QJsonDocument::Compact)));
            q.addBindValue(QStringLiteral("[]"));
            q.addBindValue(row.inBeam ? 1 : 0);
            q.addBindValue(now);
            q.addBindValue(now);
            if (!q.exec()) {
                std::fprintf(stderr, "gui_scale: %s\n", qPrintable(q.lastError().text()));
                return false;
            }
            out->evaluated += row.status != QLatin1String("planning");
        }
        q.finish();
        db.commit();
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("gui_scale_bulk"));

    std::unique_ptr<RunStore> store = RunStore::open(path, &error);
    std::optional<RunInfo> run = store ? store->run(out->runId) : std::nullopt;
    if (!run)
        return false;
    run->baselineScore = 250.0;
    run->bestScore = scoreOf.value(best);
    run->bestCandidateId = best;
    return store->updateRun(*run);
}

double threadCpuMs()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// Times every event the GUI thread handles, so that a stall is attributed: the longest one names its receiver.
class TimingApplication : public QApplication
{
public:
    using QApplication::QApplication;
    bool notify(QObject *receiver, QEvent *event) override
    {
        if (m_depth > 0 || QThread::currentThread() != thread())
            return QApplication::notify(receiver, event);
        ++m_depth;
        QElapsedTimer timer;
        timer.start();
        const QEvent::Type type = event->type();
        const QString name = QString::fromLatin1(receiver->metaObject()->className()) + QLatin1Char('/')
            + receiver->objectName();
        const bool done = QApplication::notify(receiver, event);
        const double ms = timer.nsecsElapsed() / 1e6;
        --m_depth;
        if (ms > longestMs) {
            longestMs = ms;
            longestWhat = QStringLiteral("%1 event %2").arg(name).arg(int(type));
        }
        return done;
    }
    double longestMs = 0;
    QString longestWhat;

private:
    int m_depth = 0;
};

// The longest gap between two ticks of a 1 ms timer on the GUI thread, and the GUI thread's CPU time within
// it (a gap with little CPU time was the thread waiting for a core, not work of ours).
struct StallMeter
{
    double maxGapMs = 0;
    double cpuInMaxGapMs = 0;
    QElapsedTimer beat;
    qint64 last = 0;
    double lastCpu = 0;
    QTimer heartbeat;
    void start()
    {
        heartbeat.setTimerType(Qt::PreciseTimer);
        heartbeat.setInterval(1);
        QObject::connect(&heartbeat, &QTimer::timeout, [this] {
            const qint64 now = beat.nsecsElapsed();
            const double cpu = threadCpuMs();
            if ((now - last) / 1e6 > maxGapMs) {
                maxGapMs = (now - last) / 1e6;
                cpuInMaxGapMs = cpu - lastCpu;
            }
            last = now;
            lastCpu = cpu;
        });
        beat.start();
        lastCpu = threadCpuMs();
        heartbeat.start();
    }
    void stop() { heartbeat.stop(); }
};

void settle(int ms)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms)
        QApplication::processEvents(QEventLoop::AllEvents, 5);
}

// The graph of a 200-candidate run (10 iterations, a beam of 4) as the window first shows it at 1280x800: the
// scale, a node's box on screen, how many candidates have a node inside the viewport, and how many boxes the
// graph draws (a collapsed group counts one).
bool graphReadability(const QString &path)
{
    Generated generated;
    if (!generate(path, &generated, 200, 10))
        return false;
    QString error;
    MainWindow window(RunStore::open(path, &error));
    window.resize(1280, 800);
    window.show();
    while (!window.windowHandle() || !window.windowHandle()->isExposed())
        QApplication::processEvents();
    window.showView(QStringLiteral("graph"));
    settle(300);
    auto *graph = window.findChild<BeamGraphView *>(QStringLiteral("beamGraph"));
    if (!graph) {
        std::fprintf(stderr, "gui_scale: no graph\n");
        return false;
    }
    graph->flushPendingUpdates();
    const double scale = graph->transform().m11();
    const QRect viewport = graph->viewport()->rect();
    int inView = 0;
    QSet<std::pair<int, int>> boxes;
    for (qint64 id = 1; id <= 200; ++id) {
        const QPointF at = graph->nodePosition(id);
        if (at.isNull() && id != 1)
            continue;
        boxes.insert({int(at.x()), int(at.y())});
        if (viewport.contains(graph->mapFromScene(at)))
            ++inView;
    }
    const QFontMetrics metrics(graph->font());
    std::printf("graph200_viewport_px: %dx%d (window 1280x800)\n", viewport.width(), viewport.height());
    std::printf("graph200_scale: %.3f\n", scale);
    std::printf("graph200_node_box_px: %.0fx%.0f (font line %d px)\n", 150 * scale, 40 * scale, metrics.height());
    std::printf("graph200_candidate_boxes: %lld (candidates with a box of their own)\n",
                static_cast<long long>(boxes.size()));
    std::printf("graph200_candidates_in_view: %d of 200\n", inView);
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QTemporaryDir dir;
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(dir.path()));
    TimingApplication app(argc, argv);
    if (!graphReadability(dir.filePath(QStringLiteral("readable.sqlite"))))
        return 1;
    const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
    Generated generated;
    if (!generate(path, &generated))
        return 1;

    QElapsedTimer clock;
    clock.start();
    QString error;
    MainWindow window(RunStore::open(path, &error));
    window.show();
    while (!window.windowHandle() || !window.windowHandle()->isExposed())
        QApplication::processEvents();
    QApplication::processEvents();
    window.repaint();
    const double openSeconds = clock.nsecsElapsed() / 1e9;

    auto *graph = window.findChild<BeamGraphView *>(QStringLiteral("beamGraph"));
    auto *chart = window.findChild<LatencyChart *>(QStringLiteral("latencyChart"));
    auto *diff = window.findChild<DiffView *>(QStringLiteral("diffView"));
    auto *tree = window.findChild<QTreeView *>(QStringLiteral("candidateTree"));
    auto *model = window.findChild<CandidateTreeModel *>();
    auto *proxy = tree ? qobject_cast<QSortFilterProxyModel *>(tree->model()) : nullptr;
    if (!graph || !chart || !diff || !tree || !model || !proxy) {
        std::fprintf(stderr, "gui_scale: a view is missing\n");
        return 1;
    }
    // The graph of a big run is laid out on the thread pool: the window is usable before it is done.
    if (graph->isLayoutPending()) {
        QEventLoop wait;
        QObject::connect(graph, &BeamGraphView::layoutFinished, &wait, &QEventLoop::quit);
        wait.exec();
    }
    std::printf("graph_layout_done_s: %.3f s (from opening; laid out off the GUI thread)\n",
                clock.nsecsElapsed() / 1e9);
    std::printf("candidates: %d\n", s_candidates);
    std::printf("graph_nodes: %d\n", graph->nodeCount());
    std::printf("tree_candidates: %d\n", model->candidateCount());
    std::printf("chart_points: %d (of %d evaluated)\n", chart->pointCount(), generated.evaluated);
    std::printf("open_s: %.3f s\n", openSeconds);

    clock.restart();
    window.showView(QStringLiteral("chart"));
    QApplication::processEvents();
    window.repaint();
    std::printf("chart_tab_s: %.3f s\n", clock.nsecsElapsed() / 1e9);
    clock.restart();
    window.showView(QStringLiteral("tree"));
    QApplication::processEvents();
    window.repaint();
    std::printf("tree_tab_s: %.3f s\n", clock.nsecsElapsed() / 1e9);

    // Streams new candidates through their states (coding -> compiling -> correct or failed) at 200 events/s,
    // the way the run controller feeds the views, while a 1 ms heartbeat records the longest gap.
    qint64 nextId = s_candidates + 1;
    QList<Candidate> inFlight;
    QRandomGenerator random(7);
    // With otherRuns > 0, as many more runs stream at the same time: their progress reaches the runs list
    // (one row update per event of each, more than the workbench sends), while the shown run fills the views.
    auto *runList = window.findChild<RunListModel *>();
    if (!runList) {
        std::fprintf(stderr, "gui_scale: the runs list model is missing\n");
        return 1;
    }
    QList<RunInfo> others;
    const auto stream = [&](const QString &view, int otherRuns = 0) {
        window.showView(view);
        settle(300);
        StallMeter meter;
        QTimer feeder;
        feeder.setTimerType(Qt::PreciseTimer);
        feeder.setInterval(1000 / s_streamPerSecond);
        QObject::connect(&feeder, &QTimer::timeout, [&] {
            Candidate c;
            if (inFlight.size() < 40 || random.bounded(2) == 0) {
                c.id = nextId++;
                c.runId = generated.runId;
                c.parentId = 1 + random.bounded(s_candidates);
                c.iteration = s_iterations + 1;
                c.status = CandidateStatus::Coding;
                c.menuItem = QStringLiteral("loop tiling");
                c.code = codeFor(c.id);
                inFlight.append(c);
            } else {
                c = inFlight.takeFirst();
                const double roll = random.generateDouble();
                c.status = roll < 0.7 ? CandidateStatus::Correct : CandidateStatus::CompileError;
                if (c.status == CandidateStatus::Correct)
                    c.score = 5 + 100 * random.generateDouble();
            }
            const QList<Candidate> batch{c};
            const int before = model->candidateCount();
            model->upsertCandidates(batch);
            graph->upsertCandidates(batch);
            chart->upsertCandidates(batch);
            diff->upsertCandidate(c);
            if (model->candidateCount() != before)
                tree->expand(proxy->mapFromSource(model->indexOfCandidate(c.parentId)));
            for (int k = 0; k < otherRuns; ++k) {
                if (others.size() <= k) {
                    RunInfo r;
                    r.id = 1000 + k;
                    r.target = QStringLiteral("cpu");
                    r.problem = QStringLiteral("gemm");
                    r.createdAt = QDateTime::currentDateTimeUtc();
                    r.state = RunState::Running;
                    others << r;
                }
                RunInfo &r = others[k];
                ++r.llmCalls;
                r.tokensIn += 2000;
                r.usd += 0.002;
                if (random.bounded(50) == 0)
                    ++r.iteration;
                runList->upsertRun(r);
            }
        });
        QEventLoop loop;
        QTimer::singleShot(s_streamSeconds * 1000, &loop, &QEventLoop::quit);
        app.longestMs = 0;
        meter.start();
        feeder.start();
        loop.exec();
        feeder.stop();
        meter.stop();
        const QString phase = otherRuns > 0 ? QStringLiteral("four_runs") : view;
        std::printf("diag_%s_stall_cpu_ms: %.1f ms (GUI thread CPU time within the longest gap)\n", qPrintable(phase),
                    meter.cpuInMaxGapMs);
        std::printf("diag_%s_longest_event_ms: %.1f ms (%s)\n", qPrintable(phase), app.longestMs,
                    qPrintable(app.longestWhat));
        settle(200); // the last burst's relayout
        return meter.maxGapMs;
    };
    const double graphStall = stream(QStringLiteral("graph"));
    const double treeStall = stream(QStringLiteral("tree"));
    const double chartStall = stream(QStringLiteral("chart"));
    const double fourRunsStall = stream(QStringLiteral("graph"), 3);

    // Another writer of the store: new candidates get ids above those streamed into the views above.
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("gui_scale_sequence"));
        db.setDatabaseName(path);
        if (!db.open()
            || !QSqlQuery(db).exec(
                QStringLiteral("UPDATE sqlite_sequence SET seq = 1000000 WHERE name = 'candidates'"))) {
            std::fprintf(stderr, "gui_scale: %s\n", qPrintable(db.lastError().text()));
            return 1;
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("gui_scale_sequence"));
    using Clock = std::chrono::steady_clock;
    std::mutex committedLock;
    QHash<qint64, Clock::time_point> committedAt; // new candidate id -> when its insert was committed
    QList<double> latenciesMs;
    QObject::connect(&window, &MainWindow::storeChanged, &window, [&](const StoreChanges &changes) {
        const Clock::time_point now = Clock::now();
        const std::lock_guard<std::mutex> lock(committedLock);
        for (const Candidate &c : changes.candidates)
            if (const auto it = committedAt.find(c.id); it != committedAt.end()) {
                latenciesMs << std::chrono::duration<double, std::milli>(now - *it).count();
                committedAt.erase(it);
            }
    });
    std::atomic<bool> writing{true};
    std::atomic<int> commits{0};
    std::thread writer([&] {
        QString writerError;
        std::unique_ptr<RunStore> store = RunStore::open(path, {.create = false, .check = false}, &writerError);
        if (!store) {
            std::fprintf(stderr, "gui_scale: writer: %s\n", qPrintable(writerError));
            return;
        }
        QRandomGenerator writerRandom(11);
        QList<Candidate> open;
        auto next = Clock::now();
        std::optional<RunInfo> run = store->run(generated.runId);
        while (writing) {
            next += std::chrono::microseconds(1000000 / s_streamPerSecond);
            std::this_thread::sleep_until(next);
            if (open.size() < 40 || writerRandom.bounded(2) == 0) {
                Candidate c;
                c.runId = generated.runId;
                c.parentId = 1 + writerRandom.bounded(s_candidates);
                c.iteration = s_iterations + 1;
                c.status = CandidateStatus::Coding;
                c.menuItem = QStringLiteral("loop tiling");
                c.code = codeFor(c.parentId);
                // Timed from before the insert (an upper bound on the latency): the GUI thread never waits on a write.
                const Clock::time_point before = Clock::now();
                c.id = store->addCandidate(c);
                {
                    const std::lock_guard<std::mutex> lock(committedLock);
                    committedAt.insert(c.id, before);
                }
                open.append(c);
            } else {
                Candidate c = open.takeFirst();
                c.status = writerRandom.generateDouble() < 0.7 ? CandidateStatus::Correct
                                                               : CandidateStatus::CompileError;
                if (c.status == CandidateStatus::Correct)
                    c.score = 5 + 100 * writerRandom.generateDouble();
                store->updateCandidate(c);
            }
            // The run's totals move as an engine's do.
            if (run && ++commits % 50 == 0) {
                run->llmCalls += 50;
                run->usd += 0.05;
                store->updateRun(*run);
            }
        }
    });
    const double externalStall = [&] {
        window.showView(QStringLiteral("graph"));
        StallMeter meter;
        QEventLoop loop;
        QTimer::singleShot(s_streamSeconds * 1000, &loop, &QEventLoop::quit);
        app.longestMs = 0;
        meter.start();
        loop.exec();
        meter.stop();
        std::printf("diag_external_stall_cpu_ms: %.1f ms (GUI thread CPU time within the longest gap)\n",
                    meter.cpuInMaxGapMs);
        std::printf("diag_external_longest_event_ms: %.1f ms (%s)\n", app.longestMs, qPrintable(app.longestWhat));
        return meter.maxGapMs;
    }();
    writing = false;
    writer.join();
    settle(1000); // the last commits reach the views
    std::sort(latenciesMs.begin(), latenciesMs.end());
    const auto percentile = [&](double p) {
        return latenciesMs.isEmpty()
            ? -1.0
            : latenciesMs.at(qMin<qsizetype>(latenciesMs.size() - 1, qsizetype(p * latenciesMs.size())));
    };
    std::printf("streamed: %lld events\n", static_cast<long long>(4 * s_streamSeconds * s_streamPerSecond));
    std::printf("graph_nodes_after: %d\n", graph->nodeCount());
    std::printf("max_stall_graph_ms: %.1f ms\n", graphStall);
    std::printf("max_stall_tree_ms: %.1f ms\n", treeStall);
    std::printf("max_stall_chart_ms: %.1f ms\n", chartStall);
    std::printf("max_stall_four_runs_ms: %.1f ms (the graph in front; 3 more runs updating the runs list)\n",
                fourRunsStall);
    std::printf("external_writer_commits: %d (%d candidate events/s from another connection)\n", commits.load(),
                s_streamPerSecond);
    std::printf("external_candidates_seen: %lld (of those inserted)\n", static_cast<long long>(latenciesMs.size()));
    std::printf("max_stall_external_writer_ms: %.1f ms (the graph in front, the window following the store)\n",
                externalStall);
    std::printf("max_stall_ms: %.1f ms\n", std::max({graphStall, treeStall, chartStall, fourRunsStall, externalStall}));
    std::printf("refresh_latency_p50_ms: %.1f ms (commit by another connection -> applied to the views)\n",
                percentile(0.5));
    std::printf("refresh_latency_p95_ms: %.1f ms\n", percentile(0.95));
    std::printf("refresh_latency_max_ms: %.1f ms\n", latenciesMs.isEmpty() ? -1.0 : latenciesMs.last());
    std::printf("peak_rss_mb: %.1f MB\n", peakRssMb());
    return 0;
}
