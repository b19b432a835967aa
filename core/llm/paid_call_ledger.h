#pragma once

#include "llm/llm_client.h"
#include "llm/price_table.h"
#include "model/llm_call.h"
#include "model/run_config.h"
#include "model/run_info.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>

namespace autocomp {

class RunStore;

// The ledger of one run's paid LLM calls: every call is recorded in the store before it is sent and
// completed with its outcome, so nothing paid for is lost or paid twice. For each request it
//   - refuses a prompt over llm.max_prompt_bytes (never sent; the call is stored as an error);
//   - reuses an answer already paid for to the same request (RunStore::cachedResponse: this run's, or any
//     run's with llm.reuse_answers: across_runs), stored as "cached";
//   - sends an identical request in flight only once: its answer serves every caller;
//   - records the call "in_flight" (with its estimated cost) before it is sent: a kill leaves it unconfirmed;
//   - refuses an answer over llm.max_answer_bytes (the call fails with the reason);
//   - adds what a sent call cost to the run's totals (Owner::paidFor).
// LlmCall status values: see model/llm_call.h. answered() is the one mapping from an LlmResponse to the
// stored record (SearchEngine's calls and AgentBuilder's alike).
// Lives on its owner's thread; every answer is handed over from its event loop, never synchronously.
class PaidCallLedger : public QObject
{
public:
    // What the ledger needs of the run it serves.
    class Owner
    {
    public:
        // The run the calls are recorded under; its totals give the estimated cost of a call in flight.
        virtual const RunInfo &ledgerRun() const = 0;
        // Whether answers are still acted on. False once the run stops, its store fails or it ends: an answer
        // arriving then is dropped and its call stays in flight (the store settles it as unconfirmed).
        virtual bool takesAnswers() const = 0;
        // Runs `work` in one store transaction; sends held meanwhile (takeHeldSends) leave after its commit.
        virtual void inBatch(const std::function<void()> &work) = 0;
        // A store write failed while `what`: the run halts.
        virtual void storeFailed(const QString &what) = 0;
        // A sent call's outcome is stored (answered or failed, not reused): it counts in the run's totals.
        virtual void paidFor(const LlmResponse &response) = 0;
        virtual void log(const QString &message) = 0;

    protected:
        ~Owner() = default;
    };
    // Called with the stored call's id, inside the transaction that stored it; not called when storing failed.
    using Answer = std::function<void(const LlmResponse &response, qint64 callId)>;

    // `client` and `store` must outlive the ledger; `config` gives the prompt and answer limits and reuse.
    PaidCallLedger(Owner *owner, LlmClient *client, RunStore *store, const LlmConfig &config,
                   QObject *parent = nullptr);

    // Records `request` for `phase` (LlmCall::phase) and `candidateId` (0: none) and sends it, or answers it
    // without sending (refused, reused, or served by an identical call in flight).
    void send(const QString &phase, qint64 candidateId, const LlmRequest &request, const Answer &answer);

    // The record of a call completed with `response`: `call` (its request and identity) with the answer,
    // usage, attempts and status: cached (usd 0) for a reused answer, ok or error otherwise.
    static LlmCall answered(LlmCall call, const LlmResponse &response);

    int inFlight() const { return int(m_replies.size()); }
    // Nothing in flight, no answer waiting to be handed over and no send held for a commit.
    bool idle() const { return m_replies.isEmpty() && m_answersDue == 0 && m_held.isEmpty(); }
    // Sends made inside the owner's transaction: the owner runs them once it committed, or drops them.
    QList<std::function<void()>> takeHeldSends() { return std::exchange(m_held, {}); }
    // Drops the held sends and aborts every request in flight (their answers are not acted on).
    void cancel();
    // For a client that outlives the ledger: aborts this run's requests and deletes their replies once finished.
    void abandon();

    // Answers received (ok) and failed calls sent in this session; the last failure's reason.
    int okCalls() const { return m_okCalls; }
    int failedCalls() const { return m_failedCalls; }
    QString lastError() const { return m_lastError; }

private:
    // Stores `response` as a new call, or completes the call recorded before sending (inFlightId); 0 on failure.
    qint64 record(const LlmCall &base, const LlmResponse &response, qint64 inFlightId, bool sent);
    // An answer that comes back without being sent (reused, or refused here): handed over from the event loop.
    void answerLater(const LlmCall &base, const LlmResponse &response, const Answer &answer);
    void launch(const LlmRequest &request, const LlmCall &base, const Answer &answer, qint64 callId);
    void arrived(LlmReply *reply, const LlmCall &base, const Answer &answer, qint64 callId);
    // The input as sent (about 4 characters a token); the output as long as the run's answers so far, or 1000.
    double estimatedCost(const ModelSpec &spec, const QString &prompt) const;

    Owner *m_owner;
    LlmClient *m_client;
    RunStore *m_store;
    LlmConfig m_config;
    PriceTable m_prices;
    QList<QPointer<LlmReply>> m_replies;
    QHash<QString, QList<std::function<void(const LlmResponse &)>>> m_waitingOnHash; // identical requests in flight
    QList<std::function<void()>> m_held; // sends waiting for their transaction's commit
    int m_answersDue = 0;
    int m_okCalls = 0;
    int m_failedCalls = 0;
    QString m_lastError;
};

} // namespace autocomp
