#pragma once

#include "llm/model_spec.h"
#include "platform/cpu_account.h"
#include "llm/sse_parser.h"
#include "llm/wire_format.h"

#include <QElapsedTimer>
#include <QHash>
#include <QNetworkProxy>
#include <QObject>
#include <QPointer>
#include <QQueue>
#include <QSet>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

class QNetworkAccessManager;
class QNetworkReply;
class QNetworkRequest;
class QTimer;

namespace autocomp {

class GcloudTokenSource;
class PriceTable;

// CPU time spent in LlmClient's own code on the threads that call it (building requests, parsing
// streams, pricing), not in the handlers of its replies. Qt's HTTP threads are apart from it.
struct LlmClientTag;
using LlmClientCpu = CpuAccount<LlmClientTag>;

struct LlmRequest
{
    ModelSpec spec;
    QString system;
    QString prompt;
    std::optional<double> temperature = 0.7;
    int maxTokens = 8192;
    int sampleIndex = 0; // distinguishes otherwise identical requests (several samples of one prompt)
    // Who asked (a run, "run 12"): queued requests are served round-robin across owners, so one run's
    // backlog does not hold back another's. Not part of hash().
    QString owner;
    // The answer-size limit of this request (its run's llm.max_answer_bytes); -1: the client's default.
    qint64 maxAnswerBytes = -1;
    // Send again an attempt that broke after it may have reached the provider (llm.resend_billed).
    bool resendBilled = false;
    bool stream = true; // Bedrock never streams; Anthropic always does above ~21k max tokens
    // OpenAI reasoning models (o1/o3/o4/gpt-5*): low | medium | high; empty means medium. They get no temperature.
    QString reasoningEffort;
    // Anthropic / Gemini / Bedrock-Claude extended thinking budget in tokens; 0 leaves thinking off.
    int thinkingBudget = 0;

    // sha256 over provider, model, base URL host, full prompt, parameters and sample index: the key under
    // which a paid response is stored and reused.
    QString hash() const;
};

struct LlmResponse
{
    bool ok = false;
    QString text; // visible answer, reasoning blocks removed
    QString reasoning; // removed reasoning text
    qint64 tokensIn = 0; // input tokens, cached ones included
    qint64 tokensOut = 0; // output tokens, reasoning ones included
    qint64 reasoningTokens = 0; // of tokensOut, spent on reasoning/thinking
    qint64 cachedTokens = 0; // of tokensIn, read from the provider's prompt cache
    double usd = 0; // from the price table; 0 for models it does not list
    double latencyMs = 0;
    int retries = 0; // backoff retries; dropping an unsupported parameter is not counted
    int httpStatus = 0;
    QString stopReason; // the provider's own words: stop, end_turn, STOP, max_tokens, ...
    QString error; // the provider's message, never containing credentials
    QString partial; // with an error: the text that arrived before the stream broke
    QStringList droppedParameters; // parameters this model rejected and that were left out
    // Why each earlier attempt failed and whether it was sent again ("attempt 1: HTTP 529 ... - sent again").
    QStringList attempts;
    bool fromCache = false;

    // The provider stopped the answer at the request's output-token limit (finish_reason "length",
    // stop_reason "max_tokens", finishReason "MAX_TOKENS", incomplete "max_output_tokens").
    bool cutAtTokenLimit() const;
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
    // Cancels the reply only while nothing of its request can have reached the provider: it is still queued,
    // waits for a token, or waits out a retry's backoff. Once an attempt has been handed to the network its
    // bytes may be at the provider (Qt's HTTP thread writes them whenever it gets to them), which may answer
    // and bill it: then this returns false and the reply goes on to finish, so its answer is not lost.
    bool abortIfUnsent();

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
    QPointer<QNetworkReply> m_network;
    bool m_mayHaveReached = false; // a byte of this attempt may have reached the provider
    bool m_streaming = false; // this attempt's answer is an event stream
    int m_status = 0; // this attempt's HTTP status, once its first bytes arrived
    qint64 m_rawBytes = 0; // bytes of this attempt's response so far
    const WireFormat *m_format = nullptr;
    QByteArray m_sentBody;
    SseParser m_sse;
    WireResult m_result;
    QByteArray m_body;
    QString m_timeoutError; // set by the client's own timers before they abort the transfer
    bool m_totalTimedOut = false;
    QTimer *m_totalTimer = nullptr;
    QTimer *m_connectTimer = nullptr;
    QTimer *m_idleTimer = nullptr;
    QString m_cutError; // the transfer was cut for its size
    int m_redirects = 0;
};

// Sends LLM requests through QNetworkAccessManager (HTTP/2 where the provider offers it, HTTP/1.1 otherwise):
// many at once, limited per provider and globally, queued per owner (a run) in arrival order and served
// round-robin across owners. A failed attempt is sent again only where the provider cannot have billed it:
// nothing of it was written, or the provider answered with an error status or error event. Several engines
// on one thread can share one client.
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
    // The proxy for every request: empty for the system's configuration (http_proxy, https_proxy, no_proxy),
    // "none" for direct connections, or a URL (http://[user:password@]host:port, socks5://host:port).
    // False with *error set when the URL is not one of those.
    bool setProxy(const QString &proxy, QString *error = nullptr);
    // The proxy a setting names (DefaultProxy: the system's); nullopt with *error set when it is not valid.
    static std::optional<QNetworkProxy> parseProxy(const QString &proxy, QString *error);
    QString proxy() const { return m_proxy; }
    // An attempt that broke after its request may have reached the provider (connection lost while waiting,
    // a stream cut or garbled) may have been billed: it fails, unless this is set.
    void setResendBilled(bool resend) { m_resendBilled = resend; }
    // The most an answer may grow to (its text and reasoning, in bytes; default 4 MiB, 0: no limit;
    // config llm.max_answer_bytes) and the most a response body may carry on the wire (default 64 MiB).
    // Past either the transfer is cut and the call fails with the reason, not retried, nothing of it kept.
    void setMaxAnswerBytes(qint64 bytes) { m_maxAnswerBytes = qMax<qint64>(0, bytes); }
    void setMaxBodyBytes(qint64 bytes) { m_maxBodyBytes = qMax<qint64>(1, bytes); }
    qint64 maxAnswerBytes() const { return m_maxAnswerBytes; }
    // A GET through the same managers, proxy and User-Agent as the LLM requests (Settings' Test connection).
    QNetworkReply *get(QNetworkRequest request);
    static QByteArray userAgent();
    // Prices for LlmResponse::usd; by default PriceTable::loadDefault() on first use.
    void setPriceTable(std::shared_ptr<const PriceTable> prices) { m_prices = std::move(prices); }
    // The gcloud program that prints Vertex AI access tokens (default: gcloud on PATH).
    void setGcloudProgram(const QString &program);
    // Where API keys come from; the default reads the provider's usual environment variable.
    void setApiKeyLookup(std::function<QString(const QString &provider)> lookup) { m_keyLookup = std::move(lookup); }

    int inFlight() const { return m_inFlight; }
    // Requests of `owner` that have left the queue (been sent), retries not counted: how the client shares out.
    qint64 startedFor(const QString &owner) const { return m_startedPerOwner.value(owner); }
    int queued() const;

    // Splits "<think>...</think>" style reasoning blocks out of a response.
    static QString stripReasoning(const QString &text, QString *reasoning);
    // Seconds to wait before retry `attempt` (0-based), honouring server hints up to 120 s.
    static double backoffSeconds(int attempt, const QByteArray &retryAfterMs, const QByteArray &retryAfter,
                                 double random01);
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
    QNetworkAccessManager *managerFor(const QUrl &url, int *index);
    void released(QNetworkReply *network);
    void onReadyRead(LlmReply *reply);
    void onNetworkFinished(LlmReply *reply);
    // The ends of an attempt onNetworkFinished tells apart. A 3xx: followed within the origin (307, 308; at
    // most 5), else the reply fails. An HTTP error status: retried where it may pass (isRetryableStatus),
    // never billed. A connection that broke before the whole answer: retried, as unsent or as maybe billed.
    // An answer that parsed: the response, priced; an empty text fails.
    void followRedirect(LlmReply *reply, QNetworkReply *network, int status);
    void failWithStatus(LlmReply *reply, QNetworkReply *network, int status);
    void failWithConnection(LlmReply *reply, QNetworkReply *network, int status);
    void acceptAnswer(LlmReply *reply);
    void finish(LlmReply *reply);
    // Why an attempt may be sent again: nothing of it was written, the provider answered with an error, or
    // the provider may have produced (and billed) an answer that broke on the way.
    enum class Resend { Unsent, Unbilled, MayBeBilled };
    void retryOrFail(LlmReply *reply, const QString &error, double delaySeconds, Resend kind);
    void retryOrFail(LlmReply *reply, const QString &error, Resend kind);
    void cut(LlmReply *reply, const QString &why);
    // Drops the parameter an HTTP 400 names, if the request sent it; true when a new attempt was started.
    bool dropUnsupported(LlmReply *reply, const QString &message);
    void price(LlmResponse *response, const LlmRequest &request);
    static QString modelKey(const LlmRequest &request);

    // Qt 6.4 opens at most 6 HTTP/1.1 connections per host and manager, so a local server (vLLM, Ollama)
    // would see 6 requests at once whatever the limit: requests to an origin are spread over as many managers
    // as it needs. An origin that answered over HTTP/2 shares one connection per manager, up to 100 streams.
    struct Origin
    {
        QList<int> inFlight; // per manager
        bool http2 = false;
    };
    QList<QNetworkAccessManager *> m_managers;
    QHash<QString, Origin> m_origins;
    QHash<QNetworkReply *, std::pair<QString, int>> m_replyOrigin; // reply -> origin key, manager index
    // Origins seen closing a kept-alive connection before reading the next request on it (a peer that
    // closes after every answer): their requests ask for a connection of their own (Connection: close).
    QSet<QString> m_closingOrigins;
    QString m_proxy;
    QNetworkProxy m_explicitProxy;
    bool m_resendBilled = false;
    qint64 m_maxAnswerBytes = 4 << 20;
    qint64 m_maxBodyBytes = qint64(64) << 20;
    // One queue per owner, in the order owners first queued; pump() takes turns starting at m_nextOwner.
    struct OwnerQueue
    {
        QString owner;
        QList<QPointer<LlmReply>> replies;
    };
    QList<OwnerQueue> m_queues;
    qsizetype m_nextOwner = 0;
    bool m_pumpPosted = false;
    QHash<QString, int> m_inFlightPerProvider;
    QHash<QString, qint64> m_startedPerOwner;
    // Fair shares: each owner's service so far (requests started), and its requests in flight. The next
    // slot goes to the owner with work waiting that has had the least service; an owner seen for the
    // first time starts level with the least served of the active ones (those with requests waiting or in
    // flight), so a new run neither waits behind old ones nor takes every slot until it has caught up.
    QHash<QString, qint64> m_service;
    QHash<QString, int> m_inFlightPerOwner;
    QHash<QString, int> m_providerLimits;
    int m_inFlight = 0;
    int m_perProviderLimit = 8;
    int m_globalLimit = 64;
    int m_maxRetries = 4;
    int m_totalTimeoutMs = 600000;
    int m_idleTimeoutMs = 120000;
    int m_connectTimeoutMs = 10000;
    std::function<QString(const QString &)> m_keyLookup;
    QHash<QString, QSet<QString>> m_dropped; // per provider/base/model: parameters it rejected
    std::shared_ptr<const PriceTable> m_prices;
    QSet<QString> m_unpriced; // models already reported as missing from the price table
    GcloudTokenSource *m_gcloud;
};

} // namespace autocomp
