#include "fake_llm_server.h"

#include "anthropic_messages_dialect.h"
#include "bedrock_converse_dialect.h"
#include "fake_http_connection.h"
#include "gemini_dialect.h"
#include "openai_chat_dialect.h"
#include "openai_responses_dialect.h"

#include <QCryptographicHash>
#include <zlib.h>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QTimer>

#include <ctime>

namespace autocomp::test {

Q_LOGGING_CATEGORY(lcFakeLlm, "autocomp.test.fakellm")

namespace {

const QString NoMatchMessage = QStringLiteral("fake-llm-server: no scripted response matches the request");

int estimateTokens(const QString &text) { return int((text.size() + 3) / 4); }

// Truncates the JSON of one SSE `data:` event so a client's JSON parser must reject it.
QByteArray corruptSseEvent(const QByteArray &event)
{
    const qsizetype dataStart = event.indexOf("data: ");
    if (dataStart < 0)
        return event.left(event.size() / 2) + "\n\n";
    const QByteArray json = event.mid(dataStart + 6).trimmed();
    return event.left(dataStart + 6) + json.left(std::max<qsizetype>(1, json.size() / 2)) + "\n\n";
}

QString errorEventMessage(const ScriptedResponse &response)
{
    return response.errorMessage.isEmpty() ? QStringLiteral("fake-llm-server: scripted error event")
                                           : response.errorMessage;
}

bool isSecretHeader(const QByteArray &name)
{
    const QByteArray lower = name.toLower();
    return lower == "authorization" || lower == "x-api-key" || lower == "x-goog-api-key" || lower == "api-key";
}

} // namespace

namespace {

// RFC 1952 gzip of bytes, through zlib.
QByteArray gzipped(const QByteArray &bytes)
{
    z_stream zs{};
    if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        qFatal("fake-llm-server: deflateInit2 failed");
    QByteArray out(int(deflateBound(&zs, uLong(bytes.size()))), Qt::Uninitialized);
    zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.constData()));
    zs.avail_in = uInt(bytes.size());
    zs.next_out = reinterpret_cast<Bytef *>(out.data());
    zs.avail_out = uInt(out.size());
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
        qFatal("fake-llm-server: deflate failed");
    out.resize(qsizetype(zs.total_out));
    deflateEnd(&zs);
    return out;
}

} // namespace

struct FakeLlmServer::ResponsePlan
{
    int status = 200;
    QByteArray contentType = "application/json";
    HttpHeaders headers; // beyond Content-Type and the framing headers
    QList<QByteArray> parts;
    bool chunked = false;
    int delayMs = 0;
    int partDelayMs = 0;
    int abortAfterParts = -1; // >= 0: drop the connection after writing that many parts
    bool hang = false; // after the last part, keep the connection open without ending the response
    bool closeBeforeHead = false; // close the connection without writing anything
    QByteArray endless; // after the parts, this part again and again until the client goes away
};

FakeLlmServer::FakeLlmServer(QObject *parent) : QObject(parent)
{
    m_dialects.push_back(std::make_unique<OpenAiChatDialect>());
    m_dialects.push_back(std::make_unique<OpenAiResponsesDialect>());
    m_dialects.push_back(std::make_unique<AnthropicMessagesDialect>());
    m_dialects.push_back(std::make_unique<GeminiDialect>());
    m_dialects.push_back(std::make_unique<BedrockConverseDialect>());
    connect(&m_server, &QTcpServer::newConnection, this, &FakeLlmServer::onNewConnection);
}

FakeLlmServer::~FakeLlmServer() = default;

bool FakeLlmServer::listen(quint16 port, const QHostAddress &address)
{
    // With the default listen backlog of 50, part of a burst of connections waits for a SYN retransmit.
    m_server.setListenBacklogSize(1024);
    m_server.setMaxPendingConnections(1024);
    return m_server.listen(address, port);
}

quint16 FakeLlmServer::port() const { return m_server.serverPort(); }

QUrl FakeLlmServer::baseUrl() const
{
    QUrl url;
    url.setScheme(QStringLiteral("http"));
    url.setHost(m_server.serverAddress().toString());
    url.setPort(port());
    return url;
}

QString FakeLlmServer::errorString() const { return m_server.errorString(); }

bool FakeLlmServer::loadScript(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = QStringLiteral("cannot read script ") + path + QStringLiteral(": ") + file.errorString();
        return false;
    }
    QString parseError;
    if (!loadScriptText(file.readAll(), QFileInfo(path).absolutePath(), &parseError)) {
        if (error)
            *error = path + QStringLiteral(": ") + parseError;
        return false;
    }
    return true;
}

bool FakeLlmServer::loadScriptText(const QByteArray &yaml, const QString &baseDir, QString *error)
{
    std::optional<FakeLlmScript> script = FakeLlmScript::parse(yaml, baseDir, error);
    if (!script)
        return false;
    m_script = std::move(script);
    return true;
}

bool FakeLlmServer::setTimingFile(const QString &path)
{
    if (m_timing.isOpen())
        m_timing.close();
    m_timing.setFileName(path);
    return m_timing.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Unbuffered);
}

namespace {
qint64 monotonicNs()
{
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
} // namespace

bool FakeLlmServer::setLogFile(const QString &path)
{
    if (m_log.isOpen())
        m_log.close();
    m_log.setFileName(path);
    if (!m_log.open(QIODevice::WriteOnly | QIODevice::Append)) {
        qCWarning(lcFakeLlm) << "cannot open request log" << path << m_log.errorString();
        return false;
    }
    return true;
}

void FakeLlmServer::onNewConnection()
{
    while (QTcpSocket *socket = m_server.nextPendingConnection()) {
        ++m_connectionsAccepted;
        auto *connection = new FakeHttpConnection(socket, this);
        connect(connection, &FakeHttpConnection::requestArrived, this,
                [this, connection](const FakeHttpRequest &request) { onRequest(connection, request); });
        connect(connection, &FakeHttpConnection::closed, this, [this, connection] { responseDone(connection); });
    }
}

void FakeLlmServer::onRequest(FakeHttpConnection *connection, const FakeHttpRequest &request)
{
    RecordedRequest record;
    record.method = request.method;
    record.path = request.path;
    record.query = request.query;
    record.headers = request.headers;
    record.body = request.body;
    record.receivedAt = QDateTime::currentDateTimeUtc();
    // From the request's first bytes read: parsing it is the server's own time, not the client's.
    record.receivedNs = request.firstByteNs > 0 ? request.firstByteNs : monotonicNs();
    record.json = QJsonDocument::fromJson(request.body).object();

    const LlmDialect *dialect = nullptr;
    LlmDialect::Endpoint endpoint = LlmDialect::Endpoint::None;
    for (const auto &candidate : m_dialects) {
        endpoint = candidate->route(request);
        if (endpoint != LlmDialect::Endpoint::None) {
            dialect = candidate.get();
            break;
        }
    }

    ResponsePlan plan;
    const auto errorPlan = [&](const LlmDialect &format, int status, const QString &message) {
        plan = ResponsePlan{};
        plan.status = status;
        plan.parts = {format.errorBody(status, message)};
    };

    if (dialect)
        record.dialect = dialect->name();
    if (!dialect) {
        errorPlan(*m_dialects.front(), 404,
                  QStringLiteral("fake-llm-server: no endpoint for ") + QString::fromLatin1(request.method) + u' '
                      + request.path);
    } else if (endpoint == LlmDialect::Endpoint::ListModels) {
        plan.parts = {dialect->modelListBody(m_script ? m_script->models() : QStringList{})};
    } else {
        QJsonParseError parseError{};
        const QJsonDocument document = QJsonDocument::fromJson(request.body, &parseError);
        DialectRequest parsed;
        QString error;
        if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
            errorPlan(*dialect, 400,
                      QStringLiteral("We could not parse the JSON body of your request: ") + parseError.errorString());
        } else if (!dialect->parseRequest(request, document.object(), &parsed, &error)) {
            errorPlan(*dialect, 400, error);
        } else {
            record.model = parsed.model;
            record.prompt = parsed.prompt;
            record.lastUserMessage = parsed.lastUserMessage;
            record.stream = parsed.stream;
            plan = planGenerate(*dialect, parsed, &record);
        }
    }
    record.status = plan.status;

    const int index = int(m_requests.size());
    m_requests.append(record);
    m_requestOf.insert(connection, index);
    appendToLog(index);
    m_inFlight.insert(connection);
    m_peakInFlight = std::max(m_peakInFlight, int(m_inFlight.size()));
    Q_EMIT requestReceived(index);
    play(connection, std::make_shared<const ResponsePlan>(std::move(plan)));
}

FakeLlmServer::ResponsePlan FakeLlmServer::planGenerate(const LlmDialect &dialect, const DialectRequest &request,
                                                        RecordedRequest *record)
{
    ResponsePlan plan;
    const std::optional<FakeLlmScript::Selection> selection = m_script
        ? m_script->take(request.lastUserMessage, request.model)
        : std::nullopt;
    if (!selection) {
        const QString message = m_script ? NoMatchMessage : NoMatchMessage + QStringLiteral(" (no script loaded)");
        qCWarning(lcFakeLlm).noquote() << message << "- model" << request.model
                                       << "- last user message:" << request.lastUserMessage.left(200);
        plan.status = 500;
        plan.parts = {dialect.errorBody(500, message)};
        return plan;
    }

    const ScriptRule &rule = m_script->rule(selection->rule);
    const ScriptedResponse &response = rule.responses.at(selection->response);
    record->ruleName = rule.name;
    record->responseIndex = selection->response;
    plan.delayMs = response.delayMs;
    plan.headers += response.headers;

    if (response.status != 200) {
        plan.status = response.status;
        plan.parts = {dialect.errorBody(response.status, response.errorMessage)};
        return plan;
    }

    DialectReply reply;
    reply.id = QStringLiteral("chatcmpl-fake-%1").arg(m_requests.size());
    reply.model = request.model.isEmpty() ? QStringLiteral("fake-model") : request.model;
    reply.content = response.content;
    reply.reasoning = response.reasoning;
    reply.reasoningTokens = std::max(0, response.reasoningTokens);
    reply.promptTokens = response.promptTokens >= 0 ? response.promptTokens : estimateTokens(request.prompt);
    reply.completionTokens = response.completionTokens >= 0 ? response.completionTokens
                                                            : estimateTokens(response.content) + reply.reasoningTokens;
    reply.cachedTokens = std::min(std::max(0, response.cachedTokens), reply.promptTokens);
    reply.created = QDateTime::currentSecsSinceEpoch();
    reply.cutAtLimit = response.cutAtLimit;

    if (request.stream) {
        plan.chunked = true;
        plan.partDelayMs = response.chunkDelayMs;
        plan.contentType = dialect.streamContentType();
        plan.headers.emplaceBack("Cache-Control", "no-cache");
        plan.parts = dialect.streamEvents(request, reply);
        const qsizetype middle = plan.parts.size() / 2;
        if (response.fault == FakeFault::MalformedJson) {
            plan.parts[middle] = corruptSseEvent(plan.parts.at(middle));
        } else if (response.fault == FakeFault::ResetMidStream) {
            plan.abortAfterParts = int(middle);
        } else if (response.fault == FakeFault::ErrorEvent) {
            // Half the answer, then the provider's in-stream error, then a proper end of the response.
            plan.parts = plan.parts.mid(0, std::max<qsizetype>(1, middle));
            plan.parts.append(dialect.streamErrorEvent(errorEventMessage(response)));
        } else if (response.fault == FakeFault::NeverEnd) {
            plan.parts = plan.parts.mid(0, std::max<qsizetype>(1, middle));
            plan.hang = true;
        } else if (response.fault == FakeFault::Drip) {
            drip(&plan, response.chunkDelayMs);
        } else if (response.fault == FakeFault::CloseBeforeAnswer) {
            plan.closeBeforeHead = true;
        } else if (response.fault == FakeFault::Endless) {
            // The opening event, then the first content event again and again: an answer without end.
            plan.endless = plan.parts.at(std::min<qsizetype>(1, plan.parts.size() - 1));
            plan.parts = plan.parts.mid(0, 1);
        }
        return plan;
    }

    const QByteArray body = dialect.completionBody(request, reply);
    if (response.fault == FakeFault::ErrorEvent) {
        // Without a stream the nearest thing is an error body under HTTP 200.
        plan.parts = {dialect.errorBody(500, errorEventMessage(response))};
    } else if (response.fault == FakeFault::NeverEnd) {
        plan.headers.emplaceBack("Content-Length", QByteArray::number(body.size()));
        plan.parts = {body.left(body.size() / 2)};
        plan.hang = true;
    } else if (response.fault == FakeFault::Drip) {
        plan.headers.emplaceBack("Content-Length", QByteArray::number(body.size()));
        plan.parts = {body};
        drip(&plan, response.chunkDelayMs);
    } else if (response.fault == FakeFault::MalformedJson) {
        plan.parts = {body.left(body.size() / 2)};
    } else if (response.fault == FakeFault::CloseBeforeAnswer) {
        plan.closeBeforeHead = true;
    } else if (response.fault == FakeFault::Endless) {
        // The body's opening, then filler without end (close-delimited: no Content-Length).
        plan.parts = {body.left(body.size() / 2)};
        plan.endless = QByteArray(4096, ' ');
    } else if (response.fault == FakeFault::ResetMidStream) {
        // Announce the whole body, deliver half of it, then drop the connection.
        plan.headers.emplaceBack("Content-Length", QByteArray::number(body.size()));
        plan.parts = {body.left(body.size() / 2), body.mid(body.size() / 2)};
        plan.abortAfterParts = 1;
    } else if (response.gzip) {
        plan.headers.emplaceBack("Content-Encoding", "gzip");
        plan.parts = {gzipped(body)};
    } else {
        plan.parts = {body};
    }
    return plan;
}

void FakeLlmServer::drip(ResponsePlan *plan, int chunkDelayMs)
{
    // Every part in small pieces with a pause between them, so events and JSON arrive cut at odd places.
    constexpr qsizetype PiecesPerPart = 3;
    QList<QByteArray> pieces;
    for (const QByteArray &part : std::as_const(plan->parts)) {
        const qsizetype size = std::max<qsizetype>(1, (part.size() + PiecesPerPart - 1) / PiecesPerPart);
        for (qsizetype pos = 0; pos < part.size(); pos += size)
            pieces.append(part.mid(pos, size));
    }
    plan->parts = pieces;
    plan->partDelayMs = chunkDelayMs > 0 ? chunkDelayMs : 20;
}

void FakeLlmServer::play(FakeHttpConnection *connection, std::shared_ptr<const ResponsePlan> plan)
{
    // Precise timers: a coarse one may fire 5% late, which a client benchmark would count as its own overhead.
    QTimer::singleShot(plan->delayMs, Qt::PreciseTimer, connection, [this, connection, plan] {
        if (plan->closeBeforeHead) {
            responseDone(connection);
            connection->close();
            return;
        }
        HttpHeaders headers{{"Content-Type", plan->contentType}};
        headers += plan->headers;
        if (m_closeAfterAnswer == CloseAfterAnswer::Delimited) {
            // No framing at all: the answer ends where the connection closes.
            headers.removeIf([](const auto &h) { return h.first.compare("Content-Length", Qt::CaseInsensitive) == 0; });
            connection->setCloseAfterResponse(true);
        } else if (plan->chunked) {
            headers.emplaceBack("Transfer-Encoding", "chunked");
        } else if (plan->abortAfterParts < 0 && !plan->hang && plan->endless.isEmpty()) {
            qsizetype length = 0;
            for (const QByteArray &part : plan->parts)
                length += part.size();
            headers.emplaceBack("Content-Length", QByteArray::number(length));
        }
        connection->writeHead(plan->status, headers);
        writeParts(connection, plan, 0);
    });
}

void FakeLlmServer::writeParts(FakeHttpConnection *connection, std::shared_ptr<const ResponsePlan> plan, int next)
{
    // Parts due at the same moment go out in one write, each still its own chunk, as a server's
    // buffered writer would send them.
    QByteArray out;
    while (next < plan->parts.size()) {
        if (next == plan->abortAfterParts) {
            connection->writeRaw(out);
            responseDone(connection);
            connection->abort();
            return;
        }
        if (plan->chunked && m_closeAfterAnswer != CloseAfterAnswer::Delimited)
            FakeHttpConnection::appendChunk(&out, plan->parts.at(next));
        else
            out += plan->parts.at(next);
        ++next;
        if (plan->partDelayMs > 0 && next < plan->parts.size()) {
            connection->writeRaw(out);
            QTimer::singleShot(plan->partDelayMs, Qt::PreciseTimer, connection,
                               [this, connection, plan, next] { writeParts(connection, plan, next); });
            return;
        }
    }
    if (plan->hang) {
        connection->writeRaw(out);
        return; // the response stays open until the client gives up
    }
    if (!plan->endless.isEmpty()) {
        // 64 KiB a turn of the event loop, as fast as the client reads (or chunk_delay_ms apart): more is
        // written only once the kernel has taken what was written before, so an endless answer costs the
        // server bounded memory however slowly the client reads.
        connection->writeRaw(out);
        out.clear();
        if (connection->unsentBytes() > (64 << 10)) {
            QTimer::singleShot(1, connection,
                               [this, connection, plan] { writeParts(connection, plan, int(plan->parts.size())); });
            return;
        }
        while (out.size() < (64 << 10)) {
            if (plan->chunked)
                FakeHttpConnection::appendChunk(&out, plan->endless);
            else
                out += plan->endless;
        }
        connection->writeRaw(out);
        QTimer::singleShot(plan->partDelayMs, connection,
                           [this, connection, plan] { writeParts(connection, plan, int(plan->parts.size())); });
        return;
    }
    if (plan->chunked && m_closeAfterAnswer != CloseAfterAnswer::Delimited)
        out += "0\r\n\r\n";
    connection->writeRaw(out);
    if (m_closeAfterAnswer == CloseAfterAnswer::Framed)
        connection->setCloseAfterResponse(true); // keep-alive was announced; closed all the same
    if (m_timing.isOpen() && m_requestOf.contains(connection)) {
        const RecordedRequest &record = m_requests.at(m_requestOf.value(connection));
        QByteArray tag;
        for (const auto &[name, value] : record.headers)
            if (name.compare("X-Autocomp-Request", Qt::CaseInsensitive) == 0)
                tag = value;
        m_timing.write((tag.isEmpty() ? QByteArray("-") : tag) + ' ' + QByteArray::number(record.receivedNs) + ' '
                       + QByteArray::number(monotonicNs()) + '\n');
    }
    responseDone(connection);
    connection->finishResponse();
}

void FakeLlmServer::responseDone(FakeHttpConnection *connection)
{
    m_inFlight.remove(connection);
    m_requestOf.remove(connection);
}

void FakeLlmServer::appendToLog(int index)
{
    if (!m_log.isOpen())
        return;
    const RecordedRequest &record = m_requests.at(index);
    QJsonObject headers;
    for (const auto &[name, value] : record.headers) {
        // Secrets are logged as a hash prefix: tests can still check which key was sent.
        const QString logged = isSecretHeader(name) ? QStringLiteral("sha256:")
                + QString::fromLatin1(QCryptographicHash::hash(value, QCryptographicHash::Sha256).toHex().left(16))
                                                    : QString::fromUtf8(value);
        headers.insert(QString::fromLatin1(name.toLower()), logged);
    }
    const QJsonObject line{
        {QStringLiteral("index"), index},
        {QStringLiteral("received_at"), record.receivedAt.toString(Qt::ISODateWithMs)},
        {QStringLiteral("method"), QString::fromLatin1(record.method)},
        {QStringLiteral("path"), record.path},
        {QStringLiteral("query"), record.query},
        {QStringLiteral("dialect"), record.dialect},
        {QStringLiteral("model"), record.model},
        {QStringLiteral("stream"), record.stream},
        {QStringLiteral("rule"), record.ruleName},
        {QStringLiteral("response_index"), record.responseIndex},
        {QStringLiteral("status"), record.status},
        {QStringLiteral("prompt"), record.prompt},
        {QStringLiteral("last_user_message"), record.lastUserMessage},
        {QStringLiteral("headers"), headers},
        {QStringLiteral("request"), record.json},
    };
    m_log.write(QJsonDocument(line).toJson(QJsonDocument::Compact) + '\n');
    m_log.flush();
}

} // namespace autocomp::test
