#include "llm/llm_client.h"
#include "platform/network_proxy.h"

#include "llm/gcloud_token_source.h"
#include "llm/price_table.h"
#include "llm/sigv4.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QCoreApplication>
#include <QLoggingCategory>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTimer>

#include <cmath>
#include <cstring>

Q_LOGGING_CATEGORY(lcLlm, "autocomp.llm")

namespace autocomp {

void LlmReply::abort()
{
    if (m_finished)
        return;
    m_aborted = true;
    if (m_network) {
        m_network->abort();
        return;
    }
    if (auto *client = qobject_cast<LlmClient *>(parent()))
        QMetaObject::invokeMethod(
            client,
            [client, self = QPointer<LlmReply>(this)] {
                if (self)
                    client->abortIdle(self);
            },
            Qt::QueuedConnection);
}

bool LlmReply::abortIfUnsent()
{
    if (m_finished)
        return false;
    if (m_network) // set as the attempt is handed to Qt, before its HTTP thread can write a byte of it
        return false;
    abort();
    return true;
}

void LlmClient::abortIdle(LlmReply *reply)
{
    const LlmClientCpu::Scope clientCpu;
    if (reply->m_finished || reply->m_network)
        return;
    for (OwnerQueue &queue : m_queues) {
        const qsizetype queued = queue.replies.indexOf(reply);
        if (queued < 0)
            continue;
        queue.replies.removeAt(queued);
        reply->m_response.error = QStringLiteral("cancelled");
        reply->m_finished = true;
        const LlmClientCpu::Pause handlers;
        Q_EMIT reply->finished();
        return;
    }
    reply->m_response.error = QStringLiteral("cancelled");
    finish(reply); // it was waiting out a retry backoff: it holds an in-flight slot
}

LlmClient::LlmClient(QObject *parent) : QObject(parent), m_gcloud(new GcloudTokenSource(this))
{
    m_keyLookup = [](const QString &provider) {
        const QString variable = ModelSpec::apiKeyVariable(provider);
        QString key = variable.isEmpty() ? QString() : qEnvironmentVariable(variable.toLatin1().constData());
        if (key.isEmpty() && provider == QLatin1String("gcp"))
            key = qEnvironmentVariable("GOOGLE_API_KEY");
        return key;
    };
}

LlmClient::~LlmClient() = default;

LlmReply *LlmClient::send(const LlmRequest &request)
{
    const LlmClientCpu::Scope clientCpu;
    auto *reply = new LlmReply(request, this);
    reply->m_clock.start();
    auto queue = std::find_if(m_queues.begin(), m_queues.end(),
                              [&](const OwnerQueue &q) { return q.owner == request.owner; });
    if (!m_service.contains(request.owner)) {
        std::optional<qint64> level;
        for (const OwnerQueue &q : std::as_const(m_queues))
            level = std::min(level.value_or(m_service.value(q.owner)), m_service.value(q.owner));
        for (auto it = m_inFlightPerOwner.cbegin(); it != m_inFlightPerOwner.cend(); ++it)
            if (it.value() > 0)
                level = std::min(level.value_or(m_service.value(it.key())), m_service.value(it.key()));
        m_service.insert(request.owner, level.value_or(0));
    }
    if (queue == m_queues.end())
        m_queues.append(OwnerQueue{request.owner, {reply}});
    else
        queue->replies.append(reply);
    schedulePump();
    return reply;
}

int LlmClient::queued() const
{
    qsizetype n = 0;
    for (const OwnerQueue &queue : m_queues)
        n += queue.replies.size();
    return int(n);
}

void LlmClient::pump()
{
    const LlmClientCpu::Scope clientCpu;
    m_pumpPosted = false;
    // Fair shares: each slot goes to the owner (a run) with work waiting that has had the least service
    // so far, ties in turn order from m_nextOwner; within an owner requests keep their arrival order,
    // skipping those whose provider is at its limit. So no run waits behind another's queue, and a run
    // that fell behind (its answers came slowly, it waited for its evaluations) catches up first.
    QList<QPointer<LlmReply>> cancelled;
    while (m_inFlight < m_globalLimit && !m_queues.isEmpty()) {
        LlmReply *next = nullptr;
        qsizetype nextIndex = -1;
        qsizetype nextAt = -1;
        for (qsizetype turn = 0; turn < m_queues.size(); ++turn) {
            const qsizetype index = (m_nextOwner + turn) % m_queues.size();
            if (next && m_service.value(m_queues.at(index).owner) >= m_service.value(m_queues.at(nextIndex).owner))
                continue;
            QList<QPointer<LlmReply>> &replies = m_queues[index].replies;
            for (qsizetype i = 0; i < replies.size();) {
                LlmReply *reply = replies.at(i);
                if (!reply || reply->m_aborted) {
                    cancelled << replies.takeAt(i);
                    continue;
                }
                const QString &provider = reply->m_request.spec.provider;
                if (m_inFlightPerProvider.value(provider) < m_providerLimits.value(provider, m_perProviderLimit)) {
                    next = reply;
                    nextIndex = index;
                    nextAt = i;
                    break;
                }
                ++i;
            }
        }
        if (next) {
            m_queues[nextIndex].replies.removeAt(nextAt);
            m_nextOwner = nextIndex + 1;
        }
        // Owners with nothing queued leave the rotation; the turn order of the others is kept.
        for (qsizetype index = m_queues.size() - 1; index >= 0; --index) {
            if (!m_queues.at(index).replies.isEmpty())
                continue;
            m_queues.removeAt(index);
            if (m_nextOwner > index)
                --m_nextOwner;
        }
        // Not wrapped here: an owner that queues next lands at the end, where the next turn is.
        if (m_queues.isEmpty())
            m_nextOwner = 0;
        if (!next)
            break;
        ++m_inFlight;
        ++m_inFlightPerProvider[next->m_request.spec.provider];
        ++m_startedPerOwner[next->m_request.owner];
        ++m_service[next->m_request.owner];
        ++m_inFlightPerOwner[next->m_request.owner];
        startAttempt(next);
    }
    // Finished last: a slot reacting to finished() may queue new requests.
    for (const QPointer<LlmReply> &reply : std::as_const(cancelled)) {
        if (reply && !reply->m_finished) {
            reply->m_response.error = QStringLiteral("cancelled");
            reply->m_finished = true;
            const LlmClientCpu::Pause handlers;
            Q_EMIT reply->finished();
        }
    }
}

void LlmClient::setGcloudProgram(const QString &program) { m_gcloud->setProgram(program); }

void LlmClient::startAttempt(LlmReply *reply)
{
    const LlmClientCpu::Scope clientCpu;
    const LlmRequest &request = reply->m_request;
    reply->m_format = WireFormat::forName(request.spec.wireFormat());
    if (!reply->m_format) {
        reply->m_response.error = QStringLiteral(
                                      "provider '%1' (wire format %2) is not supported by this build's LLM client")
                                      .arg(request.spec.provider, request.spec.wireFormat());
        finish(reply);
        return;
    }
    reply->m_sse = {};
    reply->m_result = {};
    reply->m_body.clear();
    reply->m_timeoutError.clear();

    const QSet<QString> dropped = m_dropped.value(modelKey(request));
    reply->m_response.droppedParameters = QStringList(dropped.cbegin(), dropped.cend());
    reply->m_response.droppedParameters.sort();
    const WireRequest wire = reply->m_format->build(request, dropped);
    reply->m_sentBody = wire.body;
    QNetworkRequest net(wire.url);
    net.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    net.setRawHeader("Accept", wire.stream ? "text/event-stream" : "application/json");
    for (const auto &[name, value] : wire.headers)
        net.setRawHeader(name, value);
    // The cache key, so logs on both sides can tell a repeated request from a new one. Not a secret.
    net.setRawHeader("X-Autocomp-Request", request.hash().left(32).toLatin1());

    if (!reply->m_totalTimer) {
        reply->m_totalTimer = new QTimer(reply);
        reply->m_totalTimer->setSingleShot(true);
        connect(reply->m_totalTimer, &QTimer::timeout, reply, [this, reply] {
            reply->m_timeoutError = QStringLiteral("total timeout exceeded (%1 s)").arg(m_totalTimeoutMs / 1000.0);
            reply->m_totalTimedOut = true;
            if (reply->m_network)
                reply->m_network->abort();
        });
        reply->m_totalTimer->start(m_totalTimeoutMs);
    }

    if (request.spec.wireFormat() == QLatin1String("gemini") && ModelSpec::useVertex()) {
        // Vertex AI takes an OAuth access token; gcloud prints one (asynchronously, cached).
        m_gcloud->fetch(
            [this, self = QPointer<LlmReply>(reply), net](const QString &token, const QString &error) mutable {
                if (!self || self->m_finished)
                    return;
                if (self->m_aborted || self->m_totalTimedOut) {
                    self->m_response.error = self->m_aborted ? QStringLiteral("cancelled") : self->m_timeoutError;
                    finish(self);
                    return;
                }
                if (token.isEmpty()) {
                    self->m_response.error = error;
                    finish(self);
                    return;
                }
                if (authorize(self, &net, token))
                    post(self, net);
            });
        return;
    }
    if (authorize(reply, &net, QString()))
        post(reply, net);
}

bool LlmClient::authorize(LlmReply *reply, QNetworkRequest *net, const QString &bearerOverride)
{
    const LlmRequest &request = reply->m_request;
    const QString format = request.spec.wireFormat();
    if (!bearerOverride.isEmpty()) {
        net->setRawHeader("Authorization", "Bearer " + bearerOverride.toUtf8());
        if (!qEnvironmentVariableIsEmpty("GOOGLE_CLOUD_PROJECT"))
            net->setRawHeader("x-goog-user-project", qEnvironmentVariable("GOOGLE_CLOUD_PROJECT").toUtf8());
        return true;
    }
    const QString key = m_keyLookup ? m_keyLookup(request.spec.provider) : QString();
    if (format == QLatin1String("anthropic-messages")) {
        if (!key.isEmpty())
            net->setRawHeader("x-api-key", key.toUtf8());
        return true;
    }
    if (format == QLatin1String("gemini")) {
        if (!key.isEmpty())
            net->setRawHeader("x-goog-api-key", key.toUtf8());
        return true;
    }
    if (format == QLatin1String("bedrock-converse")) {
        if (!key.isEmpty()) { // a Bedrock API key
            net->setRawHeader("Authorization", "Bearer " + key.toUtf8());
            return true;
        }
        SigV4::Credentials credentials{qEnvironmentVariable("AWS_ACCESS_KEY_ID"),
                                       qEnvironmentVariable("AWS_SECRET_ACCESS_KEY"),
                                       qEnvironmentVariable("AWS_SESSION_TOKEN")};
        if (credentials.accessKeyId.isEmpty() || credentials.secretAccessKey.isEmpty()) {
            reply->m_response.error = QStringLiteral(
                "no AWS credentials for Bedrock: set AWS_BEARER_TOKEN_BEDROCK, or "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones)");
            finish(reply);
            return false;
        }
        SigV4::signRequest(*net, "POST", reply->m_sentBody, credentials, ModelSpec::awsRegion(),
                           QStringLiteral("bedrock"), QDateTime::currentDateTimeUtc());
        return true;
    }
    if (!key.isEmpty())
        net->setRawHeader("Authorization", "Bearer " + key.toUtf8());
    return true;
}

namespace {

// What Qt's HTTP thread may hold of an answer that has not been read yet (see LlmClient::post).
constexpr qint64 ReadWindowBytes = 256 * 1024;

// The request body handed to QNetworkAccessManager as a device that cannot be rewound. Qt sends a request
// again by itself when its connection closes before the first byte of the answer, however long ago it was
// written; a paid request could be billed twice. With a body it cannot reset, Qt reports ContentReSendError
// instead, and LlmClient decides (retryOrFail).
class OneShotBody : public QIODevice
{
public:
    OneShotBody(QByteArray bytes, QObject *parent) : QIODevice(parent), m_bytes(std::move(bytes))
    {
        open(QIODevice::ReadOnly);
    }
    bool isSequential() const override { return true; }
    bool reset() override { return false; }
    qint64 bytesAvailable() const override { return m_bytes.size() - m_pos + QIODevice::bytesAvailable(); }
    bool atEnd() const override { return m_pos >= m_bytes.size() && QIODevice::bytesAvailable() == 0; }

protected:
    qint64 readData(char *data, qint64 maxSize) override
    {
        const qint64 n = std::min(maxSize, m_bytes.size() - m_pos);
        if (n <= 0)
            return m_pos >= m_bytes.size() ? -1 : 0;
        std::memcpy(data, m_bytes.constData() + m_pos, size_t(n));
        m_pos += n;
        return n;
    }
    qint64 writeData(const char *, qint64) override { return -1; }

private:
    QByteArray m_bytes;
    qint64 m_pos = 0;
};

QString originKey(const QUrl &url)
{
    return url.scheme() + QStringLiteral("://") + url.host() + QLatin1Char(':')
        + QString::number(url.port(url.scheme() == u"https" ? 443 : 80));
}

// Errors that end an attempt before any byte of it was written: nothing reached the provider.
bool failedBeforeSending(QNetworkReply::NetworkError error)
{
    switch (error) {
    case QNetworkReply::ConnectionRefusedError:
    case QNetworkReply::HostNotFoundError:
    case QNetworkReply::SslHandshakeFailedError:
    case QNetworkReply::ProxyConnectionRefusedError:
    case QNetworkReply::ProxyNotFoundError:
    case QNetworkReply::ProxyAuthenticationRequiredError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError: return true;
    default: return false;
    }
}

class SystemProxies : public QNetworkProxyFactory
{
public:
    QList<QNetworkProxy> queryProxy(const QNetworkProxyQuery &query) override { return systemProxyForQuery(query); }
};

} // namespace

QByteArray LlmClient::userAgent()
{
    const QByteArray version = QCoreApplication::applicationVersion().toUtf8();
    return "autocomp-workbench/" + (version.isEmpty() ? QByteArray("dev") : version) + " (Qt " + qVersion() + ')';
}

std::optional<QNetworkProxy> LlmClient::parseProxy(const QString &proxy, QString *error)
{
    return parseProxySetting(proxy, error);
}

bool LlmClient::setProxy(const QString &proxy, QString *error)
{
    const std::optional<QNetworkProxy> explicitProxy = parseProxy(proxy, error);
    if (!explicitProxy)
        return false;
    m_proxy = explicitProxy->type() == QNetworkProxy::DefaultProxy ? QString()
        : explicitProxy->type() == QNetworkProxy::NoProxy          ? QStringLiteral("none")
                                                                   : proxy.trimmed();
    for (QNetworkAccessManager *manager : std::as_const(m_managers)) {
        if (m_proxy.isEmpty())
            manager->setProxyFactory(new SystemProxies);
        else
            manager->setProxy(*explicitProxy);
    }
    m_explicitProxy = *explicitProxy;
    return true;
}

QNetworkAccessManager *LlmClient::managerFor(const QUrl &url, int *index)
{
    Origin &origin = m_origins[originKey(url)];
    // Qt 6.4: at most 6 HTTP/1.1 connections per host and manager. An HTTP/2 origin multiplexes.
    const int capacity = origin.http2 ? 100 : 6;
    int chosen = -1;
    for (int i = 0; i < m_managers.size(); ++i) {
        if (origin.inFlight.value(i) < capacity) {
            chosen = i;
            break;
        }
    }
    if (chosen < 0) {
        auto *manager = new QNetworkAccessManager(this);
        manager->setRedirectPolicy(QNetworkRequest::SameOriginRedirectPolicy);
        if (m_proxy.isEmpty())
            manager->setProxyFactory(new SystemProxies);
        else
            manager->setProxy(m_explicitProxy);
        m_managers << manager;
        chosen = int(m_managers.size()) - 1;
    }
    while (origin.inFlight.size() <= chosen)
        origin.inFlight << 0;
    ++origin.inFlight[chosen];
    *index = chosen;
    return m_managers.at(chosen);
}

void LlmClient::released(QNetworkReply *network)
{
    const auto it = m_replyOrigin.constFind(network);
    if (it == m_replyOrigin.cend())
        return;
    Origin &origin = m_origins[it->first];
    if (it->second < origin.inFlight.size())
        --origin.inFlight[it->second];
    if (network->attribute(QNetworkRequest::Http2WasUsedAttribute).toBool())
        origin.http2 = true;
    m_replyOrigin.erase(it);
}

QNetworkReply *LlmClient::get(QNetworkRequest request)
{
    request.setHeader(QNetworkRequest::UserAgentHeader, userAgent());
    int index = 0;
    QNetworkReply *network = managerFor(request.url(), &index)->get(request);
    m_replyOrigin.insert(network, {originKey(request.url()), index});
    connect(network, &QNetworkReply::finished, this, [this, network] { released(network); });
    return network;
}

void LlmClient::post(LlmReply *reply, QNetworkRequest net)
{
    net.setHeader(QNetworkRequest::UserAgentHeader, userAgent());
    net.setHeader(QNetworkRequest::ContentLengthHeader, reply->m_sentBody.size());
    net.setAttribute(QNetworkRequest::DoNotBufferUploadDataAttribute, true);
    net.setAttribute(QNetworkRequest::Http2AllowedAttribute, true);
    // Redirects are followed here, not by Qt: a POST must go again as a POST with its body (307, 308), and
    // only within the origin its key was meant for.
    net.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    if (m_closingOrigins.contains(originKey(net.url())))
        net.setRawHeader("Connection", "close");
    int index = 0;
    QNetworkAccessManager *manager = managerFor(net.url(), &index);
    auto *body = new OneShotBody(reply->m_sentBody, nullptr);
    QNetworkReply *network = manager->post(net, body);
    body->setParent(network);
    // Flow control. Without a read buffer limit Qt's HTTP thread reads a connection for as long as bytes keep
    // arriving: one answer that streams faster than it is parsed (an endless or runaway stream) keeps that
    // thread inside one channel, and every other request on the same manager waits with its bytes unread in
    // the kernel. With a limit the thread stops once the buffer holds a window and goes back to its event
    // loop, so the channels take turns, and a runaway answer costs bounded memory until it is cut.
    // Qt hands the limit to its HTTP thread only once the request has been started there: set earlier (as
    // here, right after post()) it is dropped. Qt 6.4 starts a request with a body from a queued call, so a
    // call queued now runs just after it, and the limit reaches the HTTP thread queued behind the request's
    // start, before any byte of the answer. requestSent and metaDataChanged set it again, which costs nothing.
    // (Checked with two endless streams on one manager: tst_reliability's answerAndPromptLimits.)
    const auto limitReadBuffer = [network] { network->setReadBufferSize(ReadWindowBytes); };
    QMetaObject::invokeMethod(network, limitReadBuffer, Qt::QueuedConnection);
    m_replyOrigin.insert(network, {originKey(net.url()), index});
    reply->m_network = network;
    reply->m_mayHaveReached = false;
    reply->m_streaming = false;
    reply->m_status = 0;
    reply->m_rawBytes = 0;
    reply->m_cutError.clear();
    if (!reply->m_connectTimer) {
        reply->m_connectTimer = new QTimer(reply);
        reply->m_connectTimer->setSingleShot(true);
        connect(reply->m_connectTimer, &QTimer::timeout, reply, [this, reply] {
            reply->m_timeoutError = QStringLiteral("connect timeout: no connection to %1 within %2 s")
                                        .arg(reply->m_request.spec.baseUrl.host())
                                        .arg(m_connectTimeoutMs / 1000.0);
            if (reply->m_network)
                reply->m_network->abort();
        });
        reply->m_idleTimer = new QTimer(reply);
        reply->m_idleTimer->setSingleShot(true);
        connect(reply->m_idleTimer, &QTimer::timeout, reply, [this, reply] {
            reply->m_timeoutError = QStringLiteral("idle timeout: no data for %1 s").arg(m_idleTimeoutMs / 1000.0);
            if (reply->m_network)
                reply->m_network->abort();
        });
    }
    const auto touch = [this, reply] {
        if (m_idleTimeoutMs > 0)
            reply->m_idleTimer->start(m_idleTimeoutMs);
    };
    touch();
    // Only a new connection is timed: a request waiting for a pooled connection is not connecting yet.
    connect(network, &QNetworkReply::socketStartedConnecting, reply,
            [this, reply] { reply->m_connectTimer->start(m_connectTimeoutMs); });
    // Qt's requestSent and metaDataChanged mark the moment a byte may have reached the provider; upload
    // progress is not asked for (every signal of it crosses from Qt's HTTP thread).
    connect(network, &QNetworkReply::requestSent, reply, [reply, touch, limitReadBuffer] {
        limitReadBuffer();
        reply->m_mayHaveReached = true;
        reply->m_connectTimer->stop();
        touch();
    });
    connect(network, &QNetworkReply::metaDataChanged, reply, [reply, touch, limitReadBuffer] {
        limitReadBuffer();
        reply->m_mayHaveReached = true;
        reply->m_connectTimer->stop();
        touch();
    });
    connect(network, &QNetworkReply::readyRead, reply, [this, reply, touch] {
        touch();
        onReadyRead(reply);
    });
    connect(network, &QNetworkReply::finished, reply, [this, reply] { onNetworkFinished(reply); });
}

void LlmClient::cut(LlmReply *reply, const QString &why)
{
    if (!reply->m_cutError.isEmpty())
        return;
    reply->m_cutError = why;
    if (reply->m_network)
        reply->m_network->abort();
}

void LlmClient::onReadyRead(LlmReply *reply)
{
    const LlmClientCpu::Scope clientCpu;
    QNetworkReply *network = reply->m_network;
    if (!network || reply->m_aborted || !reply->m_cutError.isEmpty() || !network->isOpen())
        return;
    const QByteArray bytes = network->readAll();
    if (bytes.isEmpty())
        return;
    reply->m_rawBytes += bytes.size();
    if (reply->m_rawBytes > m_maxBodyBytes) {
        cut(reply,
            QStringLiteral("the response exceeded %1 MiB and was cut")
                .arg(double(m_maxBodyBytes) / (1 << 20), 0, 'g', 4));
        return;
    }
    // The status and the kind of body are read once per attempt, with its first bytes.
    if (reply->m_status == 0) {
        reply->m_status = network->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        reply->m_streaming = network->rawHeader("content-type").contains("event-stream");
    }
    const int status = reply->m_status;
    const bool sse = reply->m_streaming;
    const qint64 limit = reply->m_request.maxAnswerBytes >= 0 ? reply->m_request.maxAnswerBytes : m_maxAnswerBytes;
    if (!sse || status >= 400) {
        reply->m_body += bytes;
        // A whole body: JSON escaping at most doubles the text, and the envelope is small.
        if (status < 400 && limit > 0 && reply->m_body.size() > 2 * limit + (1 << 16))
            cut(reply,
                QStringLiteral("answer cut off after %1 bytes: longer than llm.max_answer_bytes (%2)")
                    .arg(reply->m_rawBytes)
                    .arg(limit));
        return;
    }
    for (const SseEvent &event : reply->m_sse.feed(bytes)) {
        // The first error wins: what follows a broken event is not trusted.
        if (reply->m_result.error.isEmpty())
            reply->m_format->feedEvent(event, &reply->m_result);
    }
    // Characters stand for bytes here (exact for ASCII): converting the whole answer on every chunk would
    // cost time in proportion to its square.
    const qint64 answer = qint64(reply->m_result.text.size() + reply->m_result.reasoning.size());
    if (limit > 0 && answer > limit)
        cut(reply,
            QStringLiteral("answer cut off after %1 bytes: longer than llm.max_answer_bytes (%2)")
                .arg(answer)
                .arg(limit));
}

bool LlmClient::dropUnsupported(LlmReply *reply, const QString &message)
{
    const QString parameter = unsupportedParameter(message);
    if (parameter.isEmpty())
        return false;
    QSet<QString> &dropped = m_dropped[modelKey(reply->m_request)];
    if (dropped.contains(parameter))
        return false;
    // Only a parameter this request actually sent: otherwise dropping changes nothing and would loop.
    QJsonObject body = QJsonDocument::fromJson(reply->m_sentBody).object();
    const QJsonObject before = body;
    WireFormat::dropParameters(&body, {parameter});
    if (body == before)
        return false;
    dropped.insert(parameter);
    qCInfo(lcLlm).noquote() << reply->m_request.spec.text << "does not support" << parameter
                            << "- sending again without it";
    startAttempt(reply);
    return true;
}

void LlmClient::onNetworkFinished(LlmReply *reply)
{
    const LlmClientCpu::Scope clientCpu;
    QNetworkReply *network = reply->m_network;
    if (!network)
        return;
    onReadyRead(reply);
    released(network);
    network->deleteLater();
    reply->m_network = nullptr;
    reply->m_connectTimer->stop();
    reply->m_idleTimer->stop();
    const int status = network->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    reply->m_response.httpStatus = status;
    const WireFormat *format = reply->m_format;
    WireResult &result = reply->m_result;

    if (reply->m_aborted) {
        reply->m_response.error = QStringLiteral("cancelled");
        finish(reply);
        return;
    }
    if (!reply->m_cutError.isEmpty()) {
        // Never forwarded, never sent again: the same request would grow the same way.
        reply->m_response.partial.clear();
        reply->m_response.error = reply->m_cutError;
        finish(reply);
        return;
    }
    if (status >= 300 && status < 400) {
        followRedirect(reply, network, status);
        return;
    }
    if (status >= 400) {
        failWithStatus(reply, network, status);
        return;
    }
    // A response that arrived whole is the response, whatever Qt says of the connection afterwards: a peer
    // may end each answer by closing the connection (valid HTTP/1.x), and Qt 6.4 then sometimes reports an
    // error (ContentReSendError, RemoteHostClosedError) for a body that is complete. Whole: a stream that
    // reached its final event or the provider's own error event; a body that parses as an answer or as the
    // provider's error object. Handled below as if the connection had stayed open.
    const bool whole = status >= 200 && status < 300 && reply->m_cutError.isEmpty() && [&] {
        if (reply->m_streaming)
            return (result.complete && result.error.isEmpty()) || (!result.error.isEmpty() && !result.malformed);
        WireResult parsed; // parsed again below, into the attempt's result
        const bool ok = format->parseBody(reply->m_body, &parsed);
        return (ok && parsed.error.isEmpty()) || (!parsed.error.isEmpty() && !parsed.malformed);
    }();
    if (network->error() != QNetworkReply::NoError && whole)
        reply->m_response.attempts
            << QStringLiteral("attempt %1: the connection closed after the whole response (%2); the response is kept")
                   .arg(reply->m_attempt + 1)
                   .arg(network->errorString());
    if (network->error() != QNetworkReply::NoError && !whole) {
        failWithConnection(reply, network, status);
        return;
    }
    if (reply->m_streaming) {
        if (!result.error.isEmpty()) {
            // An error event is the provider's own report (overloaded, rate-limited), not billed; garbled
            // events are an answer the provider has already produced.
            retryOrFail(reply, result.error, result.malformed ? Resend::MayBeBilled : Resend::Unbilled);
            return;
        }
        if (!result.complete) {
            retryOrFail(reply, QStringLiteral("the stream ended before its final event"), Resend::MayBeBilled);
            return;
        }
    } else if (!format->parseBody(reply->m_body, &result) || !result.error.isEmpty()) {
        retryOrFail(reply, result.error, result.malformed ? Resend::MayBeBilled : Resend::Unbilled);
        return;
    }
    acceptAnswer(reply);
}

void LlmClient::followRedirect(LlmReply *reply, QNetworkReply *network, int status)
{
    // Qt's LocationHeader is only set for absolute URLs; a relative one is resolved against the request's.
    const QUrl target = network->url().resolved(QUrl::fromEncoded(network->rawHeader("location").trimmed()));
    const bool sameOrigin = originKey(target) == originKey(network->url());
    if ((status == 307 || status == 308) && sameOrigin && target.isValid() && reply->m_redirects < 5) {
        ++reply->m_redirects;
        reply->m_response.attempts << QStringLiteral("HTTP %1: redirected to %2").arg(status).arg(target.path());
        QNetworkRequest again = network->request();
        again.setUrl(target);
        reply->m_body.clear();
        reply->m_sse = {};
        reply->m_result = {};
        post(reply, again);
        return;
    }
    reply->m_response.error = QStringLiteral("HTTP %1: redirected to %2; not followed (%3)")
                                  .arg(status)
                                  .arg(target.toString(QUrl::RemoveUserInfo | QUrl::RemoveQuery),
                                       !sameOrigin ? QStringLiteral("another origin")
                                           : reply->m_redirects >= 5
                                           ? QStringLiteral("too many redirects")
                                           : QStringLiteral("it would turn the POST into a GET"));
    finish(reply);
}

void LlmClient::failWithStatus(LlmReply *reply, QNetworkReply *network, int status)
{
    const QString message = reply->m_format->errorMessage(reply->m_body);
    if (status == 400 && dropUnsupported(reply, message))
        return;
    // A Vertex AI token revoked or expired early: the next request asks gcloud for a new one.
    if (status == 401 && reply->m_request.spec.wireFormat() == QLatin1String("gemini") && ModelSpec::useVertex())
        m_gcloud->invalidate();
    const QString error = QStringLiteral("HTTP %1: %2").arg(status).arg(message);
    // Providers do not bill requests they answer with an error status.
    if (isRetryableStatus(status))
        retryOrFail(reply, error,
                    backoffSeconds(reply->m_attempt, network->rawHeader("retry-after-ms"),
                                   network->rawHeader("retry-after"), QRandomGenerator::global()->generateDouble()),
                    Resend::Unbilled);
    else {
        reply->m_response.error = error;
        finish(reply);
    }
}

void LlmClient::failWithConnection(LlmReply *reply, QNetworkReply *network, int status)
{
    // The connection closed before any byte of the answer, and Qt, wanting to send the request again
    // by itself, could not (its body is not resettable on purpose). Where the request had not been
    // written whole (no requestSent), the provider cannot have acted on it: a kept-alive connection
    // the peer had closed. Sent again at once, as HTTP clients do for a stale idle connection (never
    // where every byte had been written: that one may have been billed). Either way the origin closes
    // connections after its answers, so its requests ask for connections of their own from now on.
    if (network->error() == QNetworkReply::ContentReSendError && reply->m_rawBytes == 0 && status == 0) {
        m_closingOrigins.insert(originKey(network->url()));
        if (!reply->m_mayHaveReached) {
            retryOrFail(
                reply,
                QStringLiteral("the provider had closed the kept-alive connection before the request was written"), 0.0,
                Resend::Unsent);
            return;
        }
    }
    const WireResult &result = reply->m_result;
    QString error = reply->m_timeoutError;
    if (error.isEmpty())
        error = result.error.isEmpty() ? network->errorString() : result.error;
    if (network->error() == QNetworkReply::ContentReSendError)
        error = QStringLiteral("the connection closed before the answer began");
    const bool unsent = !reply->m_mayHaveReached && network->error() != QNetworkReply::ContentReSendError
        && (failedBeforeSending(network->error()) || network->error() == QNetworkReply::OperationCanceledError);
    retryOrFail(reply, error, unsent ? Resend::Unsent : Resend::MayBeBilled);
}

void LlmClient::acceptAnswer(LlmReply *reply)
{
    const WireResult &result = reply->m_result;
    LlmResponse &response = reply->m_response;
    response.tokensIn = result.tokensIn;
    response.tokensOut = result.tokensOut;
    response.reasoningTokens = result.reasoningTokens;
    response.cachedTokens = result.cachedTokens;
    response.stopReason = result.stopReason;
    response.reasoning = result.reasoning;
    response.partial.clear();
    QString reasoning;
    response.text = stripReasoning(result.text, &reasoning);
    if (!reasoning.isEmpty())
        response.reasoning += (response.reasoning.isEmpty() ? QString() : QStringLiteral("\n\n")) + reasoning;
    price(&response, reply->m_request);
    if (response.text.isEmpty()) {
        response.error = QStringLiteral("the model returned an empty answer");
        if (!result.stopReason.isEmpty())
            response.error += QStringLiteral(" (stop reason: %1)").arg(result.stopReason);
        finish(reply);
        return;
    }
    response.ok = true;
    finish(reply);
}

void LlmClient::price(LlmResponse *response, const LlmRequest &request)
{
    if (!m_prices) {
        QString source;
        QString error;
        m_prices = std::make_shared<const PriceTable>(PriceTable::loadDefault(&source, &error));
        if (!error.isEmpty())
            qCWarning(lcLlm).noquote() << "LLM costs are not computed:" << error;
    }
    const std::optional<double> usd = m_prices->cost(request.spec.provider, request.spec.model, response->tokensIn,
                                                     response->tokensOut, response->cachedTokens);
    response->usd = usd.value_or(0.0);
    // Local servers (vLLM, Ollama, openai-compatible) cost nothing per token; only paid providers are reported.
    static const QStringList s_paid{QStringLiteral("openai"),   QStringLiteral("anthropic"),
                                    QStringLiteral("gcp"),      QStringLiteral("aws"),
                                    QStringLiteral("together"), QStringLiteral("openrouter")};
    if (!usd && s_paid.contains(request.spec.provider) && !m_unpriced.contains(request.spec.text)) {
        m_unpriced.insert(request.spec.text);
        qCInfo(lcLlm).noquote() << request.spec.text << "is not in the price table: its cost counts as 0";
    }
}

void LlmClient::retryOrFail(LlmReply *reply, const QString &error, Resend kind)
{
    retryOrFail(reply, error, backoffSeconds(reply->m_attempt, {}, {}, QRandomGenerator::global()->generateDouble()),
                kind);
}

void LlmClient::retryOrFail(LlmReply *reply, const QString &error, double delaySeconds, Resend kind)
{
    const bool billed = kind == Resend::MayBeBilled && !m_resendBilled && !reply->m_request.resendBilled;
    if (reply->m_attempt >= m_maxRetries || reply->m_aborted || reply->m_totalTimedOut || billed) {
        // What arrived is kept for inspection, never passed off as the answer.
        reply->m_response.partial = reply->m_result.text;
        reply->m_response.reasoning = reply->m_result.reasoning;
        reply->m_response.error = error;
        if (!reply->m_result.text.isEmpty())
            reply->m_response.error += QStringLiteral(" (%1 characters had arrived)").arg(reply->m_result.text.size());
        if (billed && !reply->m_aborted && !reply->m_totalTimedOut && reply->m_attempt < m_maxRetries)
            reply->m_response.error += QStringLiteral(
                "; not sent again: the provider may have billed it (llm.resend_billed allows it)");
        finish(reply);
        return;
    }
    const QString why = kind == Resend::Unsent ? QStringLiteral("nothing had reached the provider")
        : kind == Resend::Unbilled             ? QStringLiteral("the provider answered with an error")
                                               : QStringLiteral("may have been billed; llm.resend_billed is set");
    reply->m_response.attempts << QStringLiteral("attempt %1: %2 - sent again after %3 s (%4)")
                                      .arg(reply->m_attempt + 1)
                                      .arg(error)
                                      .arg(delaySeconds, 0, 'g', 3)
                                      .arg(why);
    qCInfo(lcLlm).noquote() << reply->m_request.spec.text << "attempt" << reply->m_attempt + 1 << "failed:" << error
                            << "- retrying in" << delaySeconds << "s";
    ++reply->m_attempt;
    reply->m_response.retries = reply->m_attempt;
    QTimer::singleShot(int(delaySeconds * 1000), reply, [this, reply] {
        if (reply->m_aborted) {
            reply->m_response.error = QStringLiteral("cancelled");
            finish(reply);
            return;
        }
        startAttempt(reply);
    });
}

void LlmClient::finish(LlmReply *reply)
{
    const LlmClientCpu::Scope clientCpu;
    if (reply->m_finished)
        return;
    reply->m_finished = true;
    reply->m_response.latencyMs = double(reply->m_clock.nsecsElapsed()) / 1e6;
    if (reply->m_totalTimer)
        reply->m_totalTimer->stop();
    --m_inFlight;
    --m_inFlightPerProvider[reply->m_request.spec.provider];
    --m_inFlightPerOwner[reply->m_request.owner];
    {
        const LlmClientCpu::Pause handlers;
        Q_EMIT reply->finished();
    }
    schedulePump();
}

void LlmClient::schedulePump()
{
    // Requests go out from the event loop, never inside send(): a caller that stores what led to a request
    // (a paid answer, say) in the same handler has committed it before the request leaves. Several sends
    // in one handler share one pump.
    if (m_pumpPosted)
        return;
    m_pumpPosted = true;
    QMetaObject::invokeMethod(this, &LlmClient::pump, Qt::QueuedConnection);
}

} // namespace autocomp
