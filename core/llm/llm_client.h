#pragma once

#include "llm/model_spec.h"
#include "model/cpu_account.h"
#include "llm/sse_parser.h"
#include "llm/wire_format.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QQueue>
#include <QSet>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

class QNetworkRequest;
class QTimer;

namespace autocomp {

class GcloudTokenSource;
class HttpClient;
class HttpExchange;
class PriceTable;

// CPU time spent in LlmClient's own code on the threads that call it (building requests, parsing
// streams, pricing), not in the handlers of its replies. Qt's HTTP threads are apart from it.
struct LlmClientTag;
using LlmClientCpu = CpuAccount<LlmClientTag>;

struct LlmRequest {
    ModelSpec spec;
    QString system;
    QString prompt;
    std::optional<double> temperature = 0.7;
    int maxTokens = 8192;
    int sampleIndex = 0; // distinguishes otherwise identical requests (several samples of one prompt)
    // Who asked (a run, "run 12"): queued requests are served round-robin across owners, so one run's
    // backlog does not hold back another's. Not part of hash().
    QString owner;
    bool stream = true; // Bedrock never streams; Anthropic always does above ~21k max tokens
    // OpenAI reasoning models (o1/o3/o4/gpt-5*): low | medium | high; empty means medium. They get no temperature.
    QString reasoningEffort;
    // Anthropic / Gemini / Bedrock-Claude extended thinking budget in tokens; 0 leaves thinking off.
    int thinkingBudget = 0;

    // sha256 over provider, model, base URL host, full prompt, parameters and sample index: the key under
    // which a paid response is stored and reused.
    QString hash() const;
};

struct LlmResponse {
    bool ok = false;
    QString text;       // visible answer, reasoning blocks removed
    QString reasoning;  // removed reasoning text
    qint64 tokensIn = 0;        // input tokens, cached ones included
    qint64 tokensOut = 0;       // output tokens, reasoning ones included
    qint64 reasoningTokens = 0; // of tokensOut, spent on reasoning/thinking
    qint64 cachedTokens = 0;    // of tokensIn, read from the provider's prompt cache
    double usd = 0;             // from the price table; 0 for models it does not list
    double latencyMs = 0;
    int retries = 0;            // backoff retries; dropping an unsupported parameter is not counted
    int httpStatus = 0;
    QString stopReason;         // the provider's own words: stop, end_turn, STOP, max_tokens, ...
    QString error;              // the provider's message, never containing credentials
    QString partial;            // with an error: the text that arrived before the stream broke
    QStringList droppedParameters; // parameters this model rejected and that were left out
    bool fromCache = false;
};

// One request in flight (or queued). Emits finished() exactly once.
class LlmReply : public QObject
{
    Q_OBJECT
public:
    const LlmRequest &request() const { return m_request; }
    const LlmResponse &response() const { return m_response; }
    bool isFinished() const { return m_finished; }
    void abort();

Q_SIGNALS:
    void finished();

private:
    friend class LlmClient;
    explicit LlmReply(LlmRequest request, QObject *parent) : QObject(parent), m_request(std::move(request)) {}

    LlmRequest m_request;
    LlmResponse m_response;
    bool m_finished = false;
    bool m_aborted = false;
    int m_attempt = 0;
    QElapsedTimer m_clock;
    QPointer<HttpExchange> m_network;
    const WireFormat *m_format = nullptr;
    QByteArray m_sentBody;
    SseParser m_sse;
    WireResult m_result;
    QByteArray m_body;
    QString m_timeoutError; // set by the client's own timers before they abort the transfer
    qint64 m_received = 0;  // bytes of this attempt's answer so far
    QString m_limitError;   // set when the answer outgrew the client's limit; the call fails, no retry
    bool m_totalTimedOut = false;
    QTimer *m_totalTimer = nullptr;
    QTimer *m_connectTimer = nullptr;
};

// Sends LLM requests over HTTP/1.1 (HttpClient, on this thread): many at once, limited per provider and globally,
// queued per owner (a run) in arrival order and served round-robin across owners, retried on transient
// failures as the official SDKs do. Several engines on one thread can share one client.
class LlmClient : public QObject
{
    Q_OBJECT
public:
    explicit LlmClient(QObject *parent = nullptr);
    ~LlmClient() override;

    // The reply is a child of the client; delete it (deleteLater) once finished() was handled. The request
    // leaves from the event loop after the caller returns, never inside send().
    LlmReply *send(const LlmRequest &request);

    void setMaxInFlightPerProvider(int limit) { m_perProviderLimit = qMax(1, limit); }
    // A limit for one provider (from the settings), overriding the default above.
    void setMaxInFlightFor(const QString &provider, int limit) { m_providerLimits.insert(provider, qMax(1, limit)); }
    void setMaxInFlight(int limit) { m_globalLimit = qMax(1, limit); }
    void setMaxRetries(int retries) { m_maxRetries = qMax(0, retries); }
    void setTotalTimeoutMs(int ms) { m_totalTimeoutMs = ms; }
    // No bytes for this long aborts the attempt (default 120 s); reaching a server has 10 s by default.
    void setIdleTimeoutMs(int ms) { m_idleTimeoutMs = ms; }
    void setConnectTimeoutMs(int ms) { m_connectTimeoutMs = ms; }
    // An answer (body or stream) longer than this is cut off: the call fails with the reason and is not
    // retried (config llm.max_answer_bytes); 0 means no limit.
    void setMaxAnswerBytes(qint64 bytes) { m_maxAnswerBytes = qMax<qint64>(0, bytes); }
    // Prices for LlmResponse::usd; by default PriceTable::loadDefault() on first use.
    void setPriceTable(std::shared_ptr<const PriceTable> prices) { m_prices = std::move(prices); }
    // The gcloud program that prints Vertex AI access tokens (default: gcloud on PATH).
    void setGcloudProgram(const QString &program);
    // Where API keys come from; the default reads the provider's usual environment variable.
    void setApiKeyLookup(std::function<QString(const QString &provider)> lookup) { m_keyLookup = std::move(lookup); }

    int inFlight() const { return m_inFlight; }
    int queued() const;

    // Splits "<think>...</think>" style reasoning blocks out of a response.
    static QString stripReasoning(const QString &text, QString *reasoning);
    // Seconds to wait before retry `attempt` (0-based), honouring server hints up to 120 s.
    static double backoffSeconds(int attempt, const QByteArray &retryAfterMs, const QByteArray &retryAfter, double random01);
    static bool isRetryableStatus(int status);
    // The parameter an error message says the model does not support ("Unsupported parameter: 'temperature'",
    // "temperature: Extra inputs are not permitted", "Unknown name \"temperature\""); empty when none.
    static QString unsupportedParameter(const QString &message);

private:
    friend class LlmReply;
    void pump();
    void schedulePump();
    // A cancelled reply that has no network request: queued ones leave the queue, ones waiting out a
    // retry backoff finish at once.
    void abortIdle(LlmReply *reply);
    void startAttempt(LlmReply *reply);
    void post(LlmReply *reply, QNetworkRequest request);
    // Adds the provider's authentication; false with the reply finished when it cannot.
    bool authorize(LlmReply *reply, QNetworkRequest *request, const QString &bearerOverride);
    void onReadyRead(LlmReply *reply);
    void onNetworkFinished(LlmReply *reply);
    void finish(LlmReply *reply);
    void retryOrFail(LlmReply *reply, const QString &error, double delaySeconds);
    void retryOrFail(LlmReply *reply, const QString &error);
    // Drops the parameter an HTTP 400 names, if the request sent it; true when a new attempt was started.
    bool dropUnsupported(LlmReply *reply, const QString &message);
    void price(LlmResponse *response, const LlmRequest &request);
    static QString modelKey(const LlmRequest &request);

    // Qt 6.4 opens at most 6 HTTP/1.1 connections per host and manager, so a local server (vLLM, Ollama)
    // would see 6 requests at once whatever the limit; requests are spread over a few managers instead.
    HttpClient *m_http = nullptr;
    // One queue per owner, in the order owners first queued; pump() takes turns starting at m_nextOwner.
    struct OwnerQueue {
        QString owner;
        QList<QPointer<LlmReply>> replies;
    };
    QList<OwnerQueue> m_queues;
    qsizetype m_nextOwner = 0;
    bool m_pumpPosted = false;
    QHash<QString, int> m_inFlightPerProvider;
    QHash<QString, int> m_providerLimits;
    int m_inFlight = 0;
    int m_perProviderLimit = 8;
    int m_globalLimit = 64;
    int m_maxRetries = 4;
    int m_totalTimeoutMs = 600000;
    int m_idleTimeoutMs = 120000;
    int m_connectTimeoutMs = 10000;
    qint64 m_maxAnswerBytes = 4 * 1024 * 1024;
    std::function<QString(const QString &)> m_keyLookup;
    QHash<QString, QSet<QString>> m_dropped; // per provider/base/model: parameters it rejected
    std::shared_ptr<const PriceTable> m_prices;
    QSet<QString> m_unpriced; // models already reported as missing from the price table
    GcloudTokenSource *m_gcloud;
};

} // namespace autocomp
