#pragma once

#include "llm/llm_client.h"
#include "llm/paid_call_ledger.h"
#include "model/agent.h"
#include "model/candidate.h"
#include "model/eval_result.h"
#include "model/problem.h"
#include "model/run_config.h"
#include "model/run_info.h"
#include "model/run_lease.h"
#include "model/target.h"
#include "search/menu_dropout.h"
#include "search/run_lifecycle.h"
#include "search/run_setup.h"

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QThread>

#include <functional>
#include <memory>
#include <random>

class QTimer;

namespace autocomp {

class Evaluator;
class EvalJob;
class RunStore;

// The beam search of DESIGN.md §1. Lives on one thread (its owner's event loop); LLM requests and
// evaluations are asynchronous and pipelined: a plan's code requests start when the plan arrives and
// an evaluation starts when its code arrives. The only barrier is beam selection at the end of an
// iteration. Every response and evaluation is written to the store the moment it exists, and every
// request is keyed by a hash, so a resumed run reuses what was paid for and redoes only unfinished work.
//
// The engine is the facade of three parts: the beam algorithm (search_engine.cpp, with its candidates'
// evaluation in candidate_evaluation.cpp, the questions asked before a parent's plans in
// parent_preparation.cpp and the plans and code added by hand in human_entry.cpp), the run's lifecycle
// (run_lifecycle.cpp, one RunLifecycle::Phase) and the ledger of paid LLM calls (PaidCallLedger). Its public functions
// are called on its own thread only (asserted).
class SearchEngine
    : public QObject
    , private PaidCallLedger::Owner
{
    Q_OBJECT
public:
    explicit SearchEngine(RunSetup setup, QObject *parent = nullptr);
    // Engines of several runs on one thread can share one client: its queue then takes turns between
    // the runs (LlmRequest::owner). The client must outlive the engine.
    SearchEngine(RunSetup setup, LlmClient *sharedClient, QObject *parent = nullptr);
    // Several engines can share one evaluator too (RunManager): its compile and benchmark slots are then
    // the machine's, so two runs never time on the same core at once. It must outlive the engine.
    SearchEngine(RunSetup setup, LlmClient *sharedClient, Evaluator *sharedEvaluator, QObject *parent = nullptr);
    ~SearchEngine() override;

    // Opens the store, records a new run and evaluates the starting code.
    bool start(QString *error);
    // Continues a stored run (after a crash, a kill or a pause in another process).
    bool resume(qint64 runId, QString *error);
    // Pause: in-flight work finishes, nothing new starts; the state is persisted as paused.
    void pause();
    void resumeWork();
    // Cancels in-flight requests and evaluations and ends the run as stopped. What was in flight is left
    // not done (never a failure of its candidate) and is redone on resume; requests cut off are kept as
    // "unconfirmed" calls, since the provider may bill them.
    void stop(const QString &reason = QStringLiteral("stopped by the user"));
    // Like stop, but the run is left paused: the state a run keeps across an application restart.
    void suspend(const QString &reason);

    // A human in the loop. Both join the current iteration and the next beam selection.
    qint64 addHumanPlan(qint64 parentId, const QString &plan, QString *error);
    qint64 addHumanCode(qint64 parentId, const QString &code, QString *error);

    qint64 runId() const { return m_run.id; }
    RunInfo runInfo() const { return m_run; }
    RunState state() const { return m_run.state; }
    // The process that took this run over (its lease) while this one was not heard from (stopped, cut off):
    // this engine then ended without writing anything more. nullopt otherwise.
    std::optional<RunLease> lostTo() const { return m_lostTo; }
    QList<qint64> beam() const { return m_beam; }
    Candidate candidate(qint64 id) const { return m_candidates.value(id); }
    LlmClient *llmClient() const { return m_llm; }
    const RunSetup &setup() const { return m_setup; }
    int inFlightRequests() const { return m_ledger ? m_ledger->inFlight() : 0; }
    int inFlightEvaluations() const { return int(m_jobs.size()); }

    // Deterministic menu dropout (MenuDropout::draw): each item is dropped with probability `dropout`; at
    // least one survives.
    static QList<int> dropoutDraw(int menuSize, double dropout, std::mt19937_64 &rng)
    {
        return MenuDropout::draw(menuSize, dropout, rng);
    }

Q_SIGNALS:
    void runStateChanged(autocomp::RunState state, const QString &reason);
    void candidateAdded(const autocomp::Candidate &candidate);
    void candidateUpdated(const autocomp::Candidate &candidate);
    void beamChanged(const QList<qint64> &beam);
    void iterationFinished(int iteration);
    void usageChanged(qint64 tokensIn, qint64 tokensOut, double usd, qint64 calls);
    void logMessage(const QString &message);
    void finished(const autocomp::RunInfo &run);
    // Another process took the run over: this engine stops and writes nothing more; finished() follows, with the
    // run as this engine last knew it (the store has the new driver's).
    void leaseLost(const autocomp::RunLease &holder);

private:
    using LlmCallback = PaidCallLedger::Answer;

    // Debug builds assert that the facade is called on the engine's own thread (STYLE.md).
    void assertOwnThread() const
    {
        Q_ASSERT_X(QThread::currentThread() == thread(), "SearchEngine", "called from another thread");
    }

    bool open(QString *error);
    void startIteration(int iteration, bool adopt);
    void adoptPlanSlot(qint64 parentId, int parentIndex, int planIndex, int slot);
    // What the plan prompts for one parent need asked first, once per parent (and phase): the ISA filter's
    // selection, the one-shot menu's strategies, the examples a model picked.
    struct ParentPrep
    {
        std::optional<QString> isaDocs; // search.isa_filter; nullopt: the whole ISA
        QStringList proposed; // search.menu_strategy: one-shot
        QList<int> examples; // search.example_rate: the picked examples (0-based)
    };
    // `skipSamples` (skip_planning only): samples of the slot already stored, not asked again.
    void requestPlan(qint64 parentId, int parentIndex, int planIndex, int planSlot, const QSet<int> &skipSamples = {});
    void prepareParent(qint64 parentId, qint64 key);
    qint64 prepKey(qint64 parentId) const { return parentId * 2 + (inTranslation() ? 1 : 0); }
    // The menu the plan prompts for `parentId` draw from: the translation menu, or the agent's menu plus
    // the strategies a model proposed for it (one-shot).
    QStringList menuFor(qint64 parentId) const;
    // search.isa_filter: asks which ISA sections, then entries, matter for the parent's code.
    void filterIsa(qint64 parentId, const std::function<void(const QString &)> &done);
    // search.menu_strategy one-shot: asks for new strategies for the parent's code (call phase "menu").
    void proposeStrategies(qint64 parentId, const QString &isaDocs,
                           const std::function<void(const QStringList &)> &done);
    // search.example_rate: asks which code examples matter for the parent's code (call phase "examples").
    void selectExamples(qint64 parentId, const QString &isaDocs, const std::function<void(const QList<int> &)> &done);
    void sendPlan(qint64 parentId, int parentIndex, int planIndex, int planSlot, const ParentPrep &prep,
                  const QSet<int> &skipSamples);
    // search.skip_planning: the prompt's samples go out as code requests (call phase "direct"); each answer
    // becomes a candidate whose plan is the answer's reasoning.
    void sendDirect(qint64 parentId, int planSlot, const QString &prompt, const QSet<int> &skipSamples);
    void directArrived(qint64 parentId, int planSlot, int sample, const QString &model, const LlmResponse &response,
                       qint64 callId);
    void planArrived(qint64 parentId, int planSlot, const QString &model, const LlmResponse &response, qint64 callId);
    // The child of `parentId` that one answer (a plan, or a direct answer) makes, where it stands in the
    // iteration: on success with `plan` and the menu item the plan chose, status Coding; on failure with
    // the reason ("<request> request failed: ..."), status Failed.
    Candidate childOfAnswer(qint64 parentId, int planSlot, const QString &model, qint64 callId,
                            const LlmResponse &response, const QString &request, const QString &plan) const;
    void requestCode(qint64 candidateId);
    void codeArrived(qint64 candidateId, const LlmResponse &response, bool fix);
    void evaluate(qint64 candidateId);
    void evaluationFinished(qint64 candidateId, const EvalResult &result);
    void requestFix(qint64 failedId);
    void sendFixRequest(qint64 fixId);
    void requestTranslationScore(qint64 candidateId);
    void rootEvaluated(const Candidate &root);
    // Whether a candidate with this verdict gets a fix request (search.fix_attempts).
    static bool fixable(CandidateStatus status);
    // Why a run whose starting code is not correct cannot go on, in words for the user.
    static QString startFailure(const Candidate &root);
    bool unmeasuredRun(const Candidate &root) const;
    void workDone();
    void selectBeam();
    void finish(RunState state, const QString &reason);
    void cancelEvaluations();
    void announceEnd(RunState state, const QString &reason);
    // The run ended but its end could not be stored: it is reported paused with the store's reason.
    void endUnstored(const QString &storeError);
    // Cancels in-flight requests and evaluations without acting on their outcome.
    void cancelInFlight();
    // Unless the run has ended: cancels what is in flight, then ends the run as `state` (stop, suspend, halt).
    void cancelAndFinish(RunState state, const QString &reason);
    // A write to the store failed (disk full, I/O error, read-only): nothing acts on unstored work any more,
    // and the run ends paused with the reason; `resume` continues it once the store can be written.
    void storeFailed(const QString &what) override;
    // The store says another process drives the run now: stop at once, write nothing (not even the end).
    void leaseTakenOver();
    // Runs `work` in one store transaction; requests it sends leave only once that transaction is committed.
    void inBatch(const std::function<void()> &work) override;
    // Why a finished run counts as failed (nothing was evaluated); empty when it does not.
    QString failureOf() const;
    void pollControl();
    // Takes the plans and edited code other processes left for this run in the store (RunRequest).
    void takeRunRequests();
    void checkPaused();
    // Runs `work` now, or later when the run is paused.
    void startWork(std::function<void()> work);

    bool inTranslation() const;
    QString forcedItem() const;
    int requestIndex(const Candidate &c, int attempt) const;
    // A child of `parentId` added by hand (a plan or code: `what`) in this iteration; nullopt with `error`
    // saying why when it cannot be added now (error is cleared otherwise).
    std::optional<Candidate> humanChild(qint64 parentId, const QString &text, const QString &what,
                                        QString *error) const;
    void sendLlm(const QString &phase, const ModelSpec &spec, const QString &prompt, int sampleIndex,
                 qint64 candidateId, LlmCallback callback, std::optional<double> temperature = 0.7);
    QString budgetExceeded() const;
    // The candidate evaluated (or being evaluated) in this run whose normalized code equals `c`'s; 0 when none.
    qint64 duplicateOf(const Candidate &c) const;
    void markDuplicate(qint64 candidateId, qint64 originalId);
    // The run's best: scanning the correct candidates in the order they were made, one replaces the best
    // only when clearly better, so among candidates within noise of each other the earlier stays best.
    void updateBest();
    // Whether `c` improves on `incumbent` beyond the noise of their measurements (always for a better
    // deterministic score).
    static bool clearlyBetter(const Candidate &c, const Candidate &incumbent, double slack = 1.0);
    qint64 addCandidate(Candidate candidate);
    void updateCandidate(const Candidate &candidate);
    void persistRun();
    std::mt19937_64 rngFor(quint64 a, quint64 b, quint64 c) const;
    void log(const QString &message) override;
    // PaidCallLedger::Owner: the run, whether answers are acted on (RunLifecycle::acting), and its totals.
    const RunInfo &ledgerRun() const override { return m_run; }
    bool takesAnswers() const override { return m_lifecycle.acting(); }
    void paidFor(const LlmResponse &response) override;

    RunSetup m_setup;
    std::unique_ptr<RunStore> m_store;
    LlmClient *m_llm;
    Evaluator *m_evaluator = nullptr;
    Evaluator *m_sharedEvaluator = nullptr;
    QTimer *m_controlTimer = nullptr;
    RunInfo m_run;
    QHash<qint64, Candidate> m_candidates;
    QHash<qint64, int> m_fixAttempts; // candidate -> fix attempts made on its lineage
    QHash<qint64, ParentPrep> m_prep; // prepKey -> what its plan prompts need (ISA filter, one-shot menu, examples)
    QHash<qint64, QList<std::function<void()>>> m_prepWaiting; // plan requests waiting for it
    QList<qint64> m_beam;
    QList<qint64> m_iterationCandidates;
    QList<QPointer<EvalJob>> m_jobs;
    QSet<qint64> m_evaluating; // candidates whose evaluation is in flight
    mutable QHash<qint64, QString> m_codeKeys; // candidate -> its normalized code
    QList<std::function<void()>> m_deferred;
    QStringList m_schedule;
    int m_iteration = 0;
    int m_outstanding = 0;
    int m_fixCounter = 0;
    int m_stale = 0; // iterations without enough improvement (early stop)
    double m_bestBeforeIteration = 0;
    bool m_translationDone = false;
    RunLifecycle m_lifecycle;
    std::function<void()> m_endAnnouncement; // the run's end, announced once it is committed
    std::optional<RunLease> m_lostTo;
    QElapsedTimer m_clock;
    double m_previousSeconds = 0; // wall time of earlier sessions of a resumed run
    // Made once the store is open; declared last so that it goes first, while the engine is whole.
    std::unique_ptr<PaidCallLedger> m_ledger;
};

} // namespace autocomp
