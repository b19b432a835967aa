#pragma once

#include "search/search_engine.h"

#include <QList>
#include <QObject>
#include <QPointer>

namespace autocomp {

class Evaluator;
class LlmClient;

// The searches running in this process. Every engine lives on the manager's thread, an event loop where
// their LLM requests and evaluations are asynchronous, and all of them share:
//  - one LlmClient: per-provider limits hold across runs, and its queue takes turns between runs
//    (LlmRequest::owner), so a run with a deep backlog does not starve another;
//  - one Evaluator: compile and test steps share slots bounded by the cores, and benchmark slots are
//    the machine's, so two runs never time on the same core at once.
// CPU-bound work the engines hand off (prompt assembly and the like) goes to QThreadPool::globalInstance().
class RunManager : public QObject
{
    Q_OBJECT
public:
    explicit RunManager(QObject *parent = nullptr);
    ~RunManager() override;

    LlmClient *llmClient() const { return m_llm; }
    // The shared evaluator, made from the first run's evaluation settings (slots, isolation, sandbox);
    // later runs keep their own profile and keep_workdirs options.
    Evaluator *evaluator(const EvaluationConfig &config);

    // A new engine for `setup`, a child of the manager; start it with start() or resume(). Engines that
    // have finished are deleted by the manager after finished() was delivered.
    SearchEngine *create(const RunSetup &setup);
    bool start(SearchEngine *engine, QString *error);
    bool resume(SearchEngine *engine, qint64 runId, QString *error);

    QList<SearchEngine *> engines() const;
    SearchEngine *engine(qint64 runId) const;
    // Engines that are running or paused in this process.
    int active() const;

    void pauseAll();
    void stopAll(const QString &reason);

Q_SIGNALS:
    void runFinished(autocomp::SearchEngine *engine, const autocomp::RunInfo &run);
    // Every engine has finished (or been paused): a CLI process can end.
    void idle();

private:
    void watch(SearchEngine *engine);

    LlmClient *m_llm;
    Evaluator *m_evaluator = nullptr;
    QList<QPointer<SearchEngine>> m_engines;
};

} // namespace autocomp
