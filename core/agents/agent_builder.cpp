#include "agents/agent_builder.h"

#include "agents/html_text.h"
#include "llm/llm_client.h"
#include "llm/paid_call_ledger.h"
#include "llm/price_table.h"
#include "catalog/repository.h"
#include "store/run_store.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QSaveFile>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

namespace autocomp {

namespace {

AgentBuilder::PdfReader &pdfReader()
{
    static AgentBuilder::PdfReader s_reader;
    return s_reader;
}

// The agent files a document can inform, in the order they are built and shown.
const QStringList &fileKeys()
{
    static const QStringList s_keys{QStringLiteral("architecture"), QStringLiteral("isa"),
                                    QStringLiteral("optimization"), QStringLiteral("rules"),
                                    QStringLiteral("examples")};
    return s_keys;
}

struct FileSpec
{
    QString fileName;
    QString what; // what belongs in it, for the map step
    QString format; // how the reduce step writes it
    int outputChars; // what the reduce step may write
};

FileSpec fileSpec(const QString &key)
{
    if (key == QLatin1String("architecture"))
        return {
            QStringLiteral("architecture.md"),
            QStringLiteral("the hardware: compute units, memory hierarchy with sizes and bandwidths, how data moves "
                           "between levels, and what limits performance"),
            QStringLiteral("Markdown prose and short lists, about one page, no top-level title"), 6000};
    if (key == QLatin1String("isa"))
        return {
            QStringLiteral("isa_docs.md"),
            QStringLiteral("the programming interface: instructions, intrinsics or API calls with their exact names, "
                           "operands, signatures, constraints and semantics"),
            QStringLiteral("Markdown with one `## ` section per group of operations and one `### ` entry per "
                           "instruction or call"),
            40000};
    if (key == QLatin1String("optimization"))
        return {
            QStringLiteral("optimization_menu.yaml"),
            QStringLiteral(
                "optimization strategies specific to this hardware that a programmer could apply to a kernel"),
            QStringLiteral("one strategy per line, each line starting with `- `, each a single imperative sentence; "
                           "no other text"),
            4000};
    if (key == QLatin1String("rules"))
        return {QStringLiteral("rules.yaml"),
                QStringLiteral("rules a correct and fast program for this hardware must follow"),
                QStringLiteral("three sections headed `GENERAL:`, `PLANNING:` and `CODING:`, each a list of lines "
                               "starting with `- `"),
                4000};
    return {QStringLiteral("code_examples.md"),
            QStringLiteral("complete, correct code examples for this hardware, with what each one shows"),
            QStringLiteral("for each example: a `## name` line, a `SUMMARY: ` line, then one fenced code block"),
            20000};
}

QString systemPrompt()
{
    return QStringLiteral(
        "You turn hardware documentation into prompt material for an LLM that optimizes kernels for that "
        "hardware. You are exact: you keep names, numbers and signatures as the documents give them and "
        "never invent what they do not say.");
}

QString scopeLine(const QString &scope)
{
    return scope.trimmed().isEmpty() ? QStringLiteral("Scope: any kernel for this hardware.")
                                     : QStringLiteral("Scope: ") + scope.trimmed();
}

QString kindOf(const QString &path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("md") || suffix == QLatin1String("markdown") || suffix == QLatin1String("rst"))
        return QStringLiteral("markdown");
    if (suffix == QLatin1String("html") || suffix == QLatin1String("htm"))
        return QStringLiteral("html");
    if (suffix == QLatin1String("pdf"))
        return QStringLiteral("pdf");
    if (suffix == QLatin1String("txt") || suffix == QLatin1String("text") || suffix.isEmpty())
        return QStringLiteral("text");
    // Source files are examples worth reading.
    static const QStringList s_code{QStringLiteral("c"),   QStringLiteral("h"),  QStringLiteral("cpp"),
                                    QStringLiteral("hpp"), QStringLiteral("cc"), QStringLiteral("cu"),
                                    QStringLiteral("py"),  QStringLiteral("s")};
    return s_code.contains(suffix) ? QStringLiteral("text") : QString();
}

} // namespace

QString AgentBuildPlan::describe(const QString &model) const
{
    QString out = QStringLiteral("Agent build plan (nothing has been sent yet)\n");
    out += QStringLiteral("  writes to: %1\n").arg(outDir);
    out += QStringLiteral("  documents: %1 (%2 characters)\n").arg(documents.size()).arg(promptChars);
    for (const AgentSourceDocument &d : documents)
        out += QStringLiteral("    %1  [%2, %3 chars]\n").arg(d.source, d.kind).arg(d.text.size());
    for (const QString &s : skipped)
        out += QStringLiteral("    skipped: %1\n").arg(s);
    out += QStringLiteral("  LLM calls to %1: at most %2 (filter %3, route %4, map %5, reduce %6)\n")
               .arg(model)
               .arg(calls())
               .arg(filterCalls)
               .arg(routeCalls)
               .arg(mapCalls)
               .arg(reduceCalls);
    out += QStringLiteral("  estimated tokens: %1 in, %2 out\n").arg(estimatedTokensIn).arg(estimatedTokensOut);
    out += estimatedUsd ? QStringLiteral("  estimated cost: at most $%1\n").arg(*estimatedUsd, 0, 'f', 2)
                        : QStringLiteral("  estimated cost: unknown (%1 is not in the price table)\n").arg(model);
    return out;
}

AgentBuilder::AgentBuilder(AgentBuildOptions options, LlmClient *client, RunStore *store, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_client(client)
    , m_store(store)
{
    QString ignored;
    m_spec = ModelSpec::parse(m_options.model, &ignored);
}

AgentBuilder::~AgentBuilder()
{
    m_cancelled = true;
    for (const QPointer<QObject> &reply : std::as_const(m_inFlight))
        if (reply)
            reply->deleteLater();
}

void AgentBuilder::setPdfReader(PdfReader reader) { pdfReader() = std::move(reader); }

bool AgentBuilder::canReadPdf() { return bool(pdfReader()); }

QStringList AgentBuilder::genericStrategies()
{
    return {
        QStringLiteral("Reduce data movement between levels of the memory hierarchy"),
        QStringLiteral("Tile the loops so each working set fits the fastest memory that holds it"),
        QStringLiteral("Reorder loops so the innermost loop walks memory with unit stride"),
        QStringLiteral("Fuse loops or operations that read the same data"),
        QStringLiteral("Split a complex loop into simpler loops the hardware handles well"),
        QStringLiteral("Unroll inner loops to expose independent operations"),
        QStringLiteral("Use the vector or matrix units for the innermost computation"),
        QStringLiteral("Double buffering: load the next block while computing on the current one"),
        QStringLiteral("Software pipelining: overlap the stages of consecutive iterations"),
        QStringLiteral("Hoist loop-invariant loads, address arithmetic and setup out of inner loops"),
        QStringLiteral("Keep reused data resident in registers or local buffers across iterations"),
        QStringLiteral("Use a lower precision where the tolerance allows it"),
        QStringLiteral("Spread the work across cores, engines or threads"),
        QStringLiteral("Remove synchronization, fences and configuration changes from the hot path"),
        QStringLiteral("Rewrite the algorithm to reduce total work"),
    };
}

QStringList AgentBuilder::chunks(const QString &text, int limit)
{
    QStringList out;
    QString current;
    const auto flush = [&] {
        if (!current.trimmed().isEmpty())
            out << current.trimmed();
        current.clear();
    };
    for (const QString &paragraph : text.split(QStringLiteral("\n\n"))) {
        if (current.size() + paragraph.size() + 2 <= limit) {
            current += paragraph + QStringLiteral("\n\n");
            continue;
        }
        flush();
        if (paragraph.size() <= limit) {
            current = paragraph + QStringLiteral("\n\n");
            continue;
        }
        // A paragraph longer than a chunk: by lines, then by characters.
        for (const QString &line : paragraph.split(QLatin1Char('\n'))) {
            if (current.size() + line.size() + 1 > limit)
                flush();
            for (qsizetype at = 0; at < line.size(); at += limit) {
                const QString piece = line.mid(at, limit);
                if (current.size() + piece.size() + 1 > limit)
                    flush();
                current += piece;
            }
            current += QLatin1Char('\n');
        }
    }
    flush();
    return out;
}

QString AgentBuilder::stageName(Stage stage)
{
    switch (stage) {
    case Stage::Idle: return QStringLiteral("idle");
    case Stage::Collecting: return QStringLiteral("reading documents");
    case Stage::Filtering: return QStringLiteral("filtering");
    case Stage::Routing: return QStringLiteral("routing");
    case Stage::Mapping: return QStringLiteral("extracting (map)");
    case Stage::Reducing: return QStringLiteral("writing files (reduce)");
    case Stage::Writing: return QStringLiteral("saving");
    case Stage::Done: return QStringLiteral("done");
    case Stage::Failed: return QStringLiteral("failed");
    }
    return {};
}

QString AgentBuilder::outDir() const
{
    return m_options.outDir.isEmpty() ? Repository::userDataDir() + QStringLiteral("/agents/") + m_options.name
                                      : m_options.outDir;
}

bool AgentBuilder::validate(QString *error) const
{
    static const QRegularExpression s_name(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9_.-]*$"));
    if (!s_name.match(m_options.name).hasMatch()) {
        *error = QStringLiteral("agent name '%1': use letters, digits, '.', '_' and '-'").arg(m_options.name);
        return false;
    }
    if (m_options.sources.isEmpty()) {
        *error = QStringLiteral("no documents: give at least one --docs PATH or URL");
        return false;
    }
    QString specError;
    if (!ModelSpec::parse(m_options.model, &specError)) {
        *error = QStringLiteral("--model %1: %2").arg(m_options.model, specError);
        return false;
    }
    // Never over a shipped agent: the data directories other than the user's.
    const QString user = QDir(Repository::userDataDir()).absolutePath();
    for (const QString &dir : Repository().dataDirs()) {
        if (QDir(dir).absolutePath() == user)
            continue;
        const QString shipped = dir + QStringLiteral("/agents/") + m_options.name;
        if (QFileInfo::exists(shipped)) {
            *error = QStringLiteral("agent '%1' is shipped (%2); choose another name").arg(m_options.name, shipped);
            return false;
        }
    }
    const QString out = outDir();
    if (QFileInfo::exists(out) && !m_options.overwrite) {
        *error = QStringLiteral("%1 exists; pass --overwrite to replace that agent").arg(out);
        return false;
    }
    if (m_options.budgetChars < 2000 || m_options.chunkChars < 1000) {
        *error = QStringLiteral("the character budget (%1) and chunk size (%2) are too small")
                     .arg(m_options.budgetChars)
                     .arg(m_options.chunkChars);
        return false;
    }
    return true;
}

void AgentBuilder::fail(const QString &error)
{
    m_stage = Stage::Failed;
    Q_EMIT stageChanged(m_stage, 0);
    Q_EMIT failed(error);
}

void AgentBuilder::cancel()
{
    if (m_cancelled)
        return;
    m_cancelled = true;
    ++m_generation; // answers of this attempt that still arrive are stored, and otherwise ignored
    // A call that has been handed to the network may already be at the provider, which answers and bills it
    // whether or not we wait: it is not aborted, its answer is stored when it comes, and the next build
    // waits for it rather than paying for it again. Calls still queued in the client cost nothing: dropped.
    int onTheWay = 0;
    const QList<QPointer<QObject>> replies = m_inFlight; // handlers of aborted replies edit m_inFlight
    for (const QPointer<QObject> &reply : replies) {
        if (auto *llm = qobject_cast<LlmReply *>(reply.data())) {
            if (llm->abortIfUnsent()) {
                --m_sent; // it never left: not paid, and the next build sends it
                m_onTheWay.removeIf([llm](const auto &entry) { return entry.value() == llm; });
            } else
                ++onTheWay;
        } else if (auto *net = qobject_cast<QNetworkReply *>(reply.data())) {
            net->abort();
        }
    }
    m_inFlight.removeIf([](const QPointer<QObject> &reply) {
        const auto *llm = qobject_cast<const LlmReply *>(reply.data());
        return !llm || llm->isFinished();
    });
    const QString kept = QStringLiteral("cancelled; %1 answer(s) are kept in the store and the next build reuses them")
                             .arg(m_answered.size());
    fail(onTheWay > 0 ? kept
                 + QStringLiteral(
                       "; %1 call(s) already sent are still being answered, and their answers are stored as they "
                       "arrive")
                       .arg(onTheWay)
                      : kept);
}

int AgentBuilder::callsOnTheWay() const
{
    int n = 0;
    for (const QPointer<LlmReply> &reply : m_onTheWay)
        n += reply && !reply->isFinished();
    return n;
}

// ---- collecting

void AgentBuilder::readLocal(const QString &path, int depth)
{
    const QFileInfo info(path);
    if (!info.exists()) {
        m_plan.skipped << QStringLiteral("%1: does not exist").arg(path);
        return;
    }
    if (info.isDir()) {
        if (depth > m_options.maxDepth) {
            m_plan.skipped << QStringLiteral("%1: deeper than %2 folders").arg(path).arg(m_options.maxDepth);
            return;
        }
        QDir dir(path);
        const QFileInfoList entries = dir.entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
        for (const QFileInfo &entry : entries)
            if (!entry.fileName().startsWith(QLatin1Char('.')))
                readLocal(entry.filePath(), depth + 1);
        return;
    }
    const QString kind = kindOf(path);
    if (kind.isEmpty()) {
        m_plan.skipped << QStringLiteral("%1: not a text, markdown, HTML or PDF file").arg(path);
        return;
    }
    AgentSourceDocument doc;
    doc.source = info.absoluteFilePath();
    doc.title = info.fileName();
    doc.kind = kind;
    if (kind == QLatin1String("pdf")) {
        if (!canReadPdf()) {
            m_plan.skipped
                << QStringLiteral("%1: PDFs need Poppler's Qt 6 binding (libpoppler-qt6-dev) at build time").arg(path);
            return;
        }
        QString error;
        const std::optional<QString> text = pdfReader()(path, &error);
        if (!text) {
            m_plan.skipped << QStringLiteral("%1: %2").arg(path, error);
            return;
        }
        doc.text = *text;
    } else {
        if (info.size() > m_options.maxFileBytes) {
            m_plan.skipped << QStringLiteral("%1: larger than %2 KB").arg(path).arg(m_options.maxFileBytes / 1024);
            return;
        }
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            m_plan.skipped << QStringLiteral("%1: %2").arg(path, file.errorString());
            return;
        }
        const QString raw = QString::fromUtf8(file.readAll());
        if (kind == QLatin1String("html")) {
            doc.text = HtmlText::toMarkdown(raw);
            if (const QString title = HtmlText::title(raw); !title.isEmpty())
                doc.title = info.fileName() + QStringLiteral(" (") + title + QLatin1Char(')');
        } else {
            doc.text = raw;
        }
    }
    if (doc.text.trimmed().isEmpty()) {
        m_plan.skipped << QStringLiteral("%1: no text").arg(path);
        return;
    }
    m_plan.documents << doc;
}

void AgentBuilder::collect()
{
    m_stage = Stage::Collecting;
    m_cancelled = false;
    Q_EMIT stageChanged(m_stage, int(m_options.sources.size()));
    m_plan = {};
    m_plan.outDir = outDir();
    for (const QString &source : std::as_const(m_options.sources)) {
        const QUrl url(source);
        if (url.scheme() == QLatin1String("http") || url.scheme() == QLatin1String("https")) {
            // Links are followed only under the start URL's folder.
            QString prefix = url.adjusted(QUrl::RemoveQuery | QUrl::RemoveFragment).toString();
            if (!prefix.endsWith(QLatin1Char('/')))
                prefix = prefix.left(prefix.lastIndexOf(QLatin1Char('/')) + 1);
            m_queue << url;
            m_seen.insert(url.toString());
            m_prefixOf.insert(url.toString(), prefix);
        } else {
            readLocal(source, 0);
        }
    }
    fetchNext();
}

void AgentBuilder::fetchNext()
{
    if (m_cancelled)
        return;
    if (m_queue.isEmpty()) {
        planned();
        return;
    }
    const QUrl url = m_queue.takeFirst();
    const QString prefix = m_prefixOf.value(url.toString());
    if (m_pagesOf.value(prefix) >= m_options.maxPages) {
        m_plan.skipped
            << QStringLiteral("%1: past %2 pages under %3").arg(url.toString()).arg(m_options.maxPages).arg(prefix);
        fetchNext();
        return;
    }
    QNetworkRequest request(url);
    request.setTransferTimeout(30000);
    QNetworkReply *reply = m_client->get(request);
    m_inFlight << reply;
    connect(reply, &QNetworkReply::finished, this, [this, reply, url, prefix] {
        reply->deleteLater();
        m_inFlight.removeAll(reply);
        if (m_cancelled)
            return;
        const QString type = reply->header(QNetworkRequest::ContentTypeHeader).toString();
        if (reply->error() != QNetworkReply::NoError) {
            m_plan.skipped << QStringLiteral("%1: %2").arg(url.toString(), reply->errorString());
        } else if (!type.startsWith(QLatin1String("text/html")) && !type.startsWith(QLatin1String("text/plain"))
                   && !type.startsWith(QLatin1String("text/markdown"))) {
            m_plan.skipped << QStringLiteral("%1: %2 is not a page of text").arg(url.toString(), type);
        } else {
            m_pagesOf[prefix] += 1;
            const QByteArray body = reply->read(qint64(m_options.maxFileBytes) + 1);
            const QString raw = QString::fromUtf8(body.left(m_options.maxFileBytes));
            AgentSourceDocument doc;
            doc.source = url.toString();
            doc.kind = QStringLiteral("web");
            const bool html = type.startsWith(QLatin1String("text/html"));
            doc.text = html ? HtmlText::toMarkdown(raw) : raw;
            doc.title = html && !HtmlText::title(raw).isEmpty() ? HtmlText::title(raw) : url.fileName();
            if (!doc.text.trimmed().isEmpty())
                m_plan.documents << doc;
            if (html)
                for (const QUrl &link : HtmlText::links(raw, url)) {
                    const QString key = link.toString();
                    if (!key.startsWith(prefix) || m_seen.contains(key))
                        continue;
                    m_seen.insert(key);
                    m_prefixOf.insert(key, prefix);
                    m_queue << link;
                }
        }
        fetchNext();
    });
}

void AgentBuilder::planned()
{
    // Sorted so that the same documents give the same prompts (and so reuse the same answers).
    std::sort(m_plan.documents.begin(), m_plan.documents.end(),
              [](const AgentSourceDocument &a, const AgentSourceDocument &b) { return a.source < b.source; });
    const int n = int(m_plan.documents.size());
    qint64 chars = 0;
    for (const AgentSourceDocument &d : std::as_const(m_plan.documents))
        chars += d.text.size();
    m_plan.promptChars = chars;
    m_plan.filterCalls = n;
    m_plan.routeCalls = n;
    // Every document in one file at worst: the chunks of all of them, and one reduce per file.
    m_plan.mapCalls = 0;
    for (const AgentSourceDocument &d : std::as_const(m_plan.documents))
        m_plan.mapCalls += int(std::ceil(double(d.text.size()) / m_options.chunkChars));
    m_plan.reduceCalls = std::min(n, int(fileKeys().size()));
    const qint64 inChars = qint64(n) * 6500 /* filter and route read a document's head */ + chars /* map */
        + qint64(m_plan.reduceCalls) * m_options.budgetChars;
    m_plan.estimatedTokensIn = inChars / 4;
    m_plan.estimatedTokensOut = qint64(n) * 2 * 4 + qint64(m_plan.mapCalls) * 1500 + qint64(m_plan.reduceCalls) * 4000;
    if (m_spec) {
        const PriceTable prices = PriceTable::loadDefault();
        m_plan.estimatedUsd = prices.cost(m_spec->provider, m_spec->model, m_plan.estimatedTokensIn,
                                          m_plan.estimatedTokensOut, 0);
    }
    m_stage = Stage::Idle;
    if (m_plan.documents.isEmpty()) {
        fail(QStringLiteral("none of the documents could be read:\n  ") + m_plan.skipped.join(QStringLiteral("\n  ")));
        return;
    }
    Q_EMIT planReady();
}

// ---- asking

void AgentBuilder::ask(const QString &phase, const QString &prompt, int sample,
                       const std::function<void(const QString &)> &done)
{
    LlmRequest request;
    request.spec = *m_spec;
    request.system = systemPrompt();
    request.prompt = prompt;
    request.temperature = 0.2;
    request.maxTokens = 16000;
    request.sampleIndex = sample;
    request.owner = QStringLiteral("agent build ") + m_options.name;
    const QString hash = request.hash();
    ++m_outstanding;
    const quint64 generation = m_generation;
    if (const std::optional<LlmCall> cached = m_store->cachedResponse(hash)) {
        ++m_reused;
        m_answered.insert(hash);
        const QString text = cached->response;
        QMetaObject::invokeMethod(
            this,
            [this, done, text, generation] {
                if (m_cancelled || generation != m_generation)
                    return;
                Q_EMIT usageChanged(m_sent, m_reused, m_usd);
                done(text);
                oneDone();
            },
            Qt::QueuedConnection);
        return;
    }
    // Sent by an earlier build and still on its way (the build was cancelled after it left): its answer is
    // paid for already. Once it is stored this asks again and finds it there; if it failed, this sends it.
    if (const QPointer<LlmReply> earlier = m_onTheWay.value(hash); earlier && !earlier->isFinished()) {
        Q_EMIT logLine(QStringLiteral("%1: waiting for the answer to a call sent before the cancel").arg(phase));
        connect(earlier, &LlmReply::finished, this, [this, phase, prompt, sample, done, generation] {
            if (m_cancelled || m_stage == Stage::Failed || generation != m_generation)
                return;
            --m_outstanding;
            ask(phase, prompt, sample, done);
        });
        return;
    }
    // Recorded before it is sent: a kill while it is in flight leaves it marked, and its cost estimated.
    LlmCall call;
    call.phase = QStringLiteral("build:") + phase;
    call.requestHash = hash;
    call.provider = m_spec->provider;
    call.model = m_spec->model;
    call.prompt = prompt;
    call.status = QStringLiteral("in_flight");
    const qint64 callId = m_store->addLlmCall(call);
    if (!callId) {
        fail(QStringLiteral("the store cannot be written: %1").arg(m_store->lastError()));
        return;
    }
    ++m_sent;
    LlmReply *reply = m_client->send(request);
    m_inFlight << reply;
    m_onTheWay.insert(hash, reply);
    // Connected first, so it stores the answer before the handler of a later build waiting for it runs.
    connect(reply, &LlmReply::finished, this, [this, reply, call, callId, done, generation] {
        reply->deleteLater();
        m_inFlight.removeAll(reply);
        if (m_onTheWay.value(call.requestHash) == reply)
            m_onTheWay.remove(call.requestHash);
        const LlmResponse &r = reply->response();
        // The client's own answer, never a reused one: stored as ok or error, at its price.
        LlmCall finished = PaidCallLedger::answered(call, r);
        finished.id = callId;
        if (m_store->completeLlmCall(finished) && r.ok)
            m_answered.insert(call.requestHash);
        m_usd += r.usd;
        Q_EMIT usageChanged(m_sent, m_reused, m_usd);
        if (m_cancelled || m_stage == Stage::Failed || generation != m_generation)
            return;
        if (!r.ok) {
            fail(QStringLiteral("%1 request failed: %2").arg(call.phase, r.error));
            return;
        }
        done(r.text);
        oneDone();
    });
}

void AgentBuilder::oneDone()
{
    --m_outstanding;
    Q_EMIT progress(++m_done, m_total);
    if (m_outstanding > 0 || m_stage == Stage::Failed || m_cancelled)
        return;
    switch (m_stage) {
    case Stage::Filtering: runRoute(); break;
    case Stage::Routing: runMap(); break;
    case Stage::Mapping: runReduce(); break;
    case Stage::Reducing: writeFiles(); break;
    default: break;
    }
}

void AgentBuilder::startStage(Stage stage)
{
    m_stage = stage;
    m_done = 0;
    Q_EMIT stageChanged(stage, m_total);
    Q_EMIT logLine(QStringLiteral("%1: %2 call(s)").arg(stageName(stage)).arg(m_total));
}

// ---- the stages

void AgentBuilder::build()
{
    QString error;
    if (!validate(&error)) {
        fail(error);
        return;
    }
    if (m_plan.documents.isEmpty()) {
        fail(QStringLiteral("nothing to build from: collect() the documents first"));
        return;
    }
    m_cancelled = false;
    ++m_generation;
    m_outstanding = 0;
    m_kept.clear();
    m_routes.clear();
    m_notes.clear();
    m_reduced.clear();
    runFilter();
}

void AgentBuilder::runFilter()
{
    m_total = int(m_plan.documents.size());
    startStage(Stage::Filtering);
    for (int i = 0; i < m_plan.documents.size(); ++i) {
        const AgentSourceDocument &d = m_plan.documents.at(i);
        const QString prompt =
            QStringLiteral("Task: filter documents for the agent '%1'.\n%2\nDocument: %3\nSource: %4\n\n%5\n\n"
                           "Is this document useful for writing or optimizing code for this hardware within "
                           "the scope? Answer with one word: yes or no.")
                .arg(m_options.name, scopeLine(m_options.scope), d.title, d.source, d.text.left(6000));
        ask(QStringLiteral("filter"), prompt, 0, [this, i](const QString &answer) {
            static const QRegularExpression s_no(QStringLiteral("^\\W*no\\b"),
                                                 QRegularExpression::CaseInsensitiveOption);
            if (s_no.match(answer.trimmed()).hasMatch())
                Q_EMIT logLine(QStringLiteral("left out (not in scope): %1").arg(m_plan.documents.at(i).source));
            else
                m_kept << i;
        });
    }
}

void AgentBuilder::runRoute()
{
    std::sort(m_kept.begin(), m_kept.end());
    m_total = int(m_kept.size());
    if (m_total == 0) {
        fail(QStringLiteral("the filter left out every document; widen the scope or add documents"));
        return;
    }
    startStage(Stage::Routing);
    for (int i : std::as_const(m_kept)) {
        const AgentSourceDocument &d = m_plan.documents.at(i);
        const QString prompt =
            QStringLiteral(
                "Task: route a document for the agent '%1'.\n%2\nDocument: %3\nSource: %4\n\n%5\n\n"
                "Which file of the agent should this document inform? architecture (the hardware and its memory), "
                "isa (the programming interface), optimization (ways to make code fast), rules (what code must or "
                "must not do), examples (complete code), or skip. Answer with one word: architecture, isa, "
                "optimization, rules, examples or skip.")
                .arg(m_options.name, scopeLine(m_options.scope), d.title, d.source, d.text.left(6000));
        ask(QStringLiteral("route"), prompt, 0, [this, source = d.source](const QString &answer) {
            const QString word = answer.trimmed()
                                     .section(QRegularExpression(QStringLiteral("\\W+")), 0, 0,
                                              QString::SectionSkipEmpty)
                                     .toLower();
            if (fileKeys().contains(word)) {
                m_routes.insert(source, word);
                Q_EMIT logLine(QStringLiteral("%1 -> %2").arg(source, word));
            } else {
                Q_EMIT logLine(QStringLiteral("%1 -> skip (%2)").arg(source, answer.trimmed().left(40)));
            }
        });
    }
}

void AgentBuilder::runMap()
{
    // Each file's documents, in order, cut into chunks that one call reads.
    QList<std::tuple<QString, int, QString>> jobs; // file, chunk index, text
    for (const QString &key : fileKeys()) {
        QString text;
        for (const AgentSourceDocument &d : std::as_const(m_plan.documents))
            if (m_routes.value(d.source) == key)
                text += QStringLiteral("[from %1]\n\n").arg(d.title) + d.text.trimmed() + QStringLiteral("\n\n");
        const QStringList pieces = chunks(text, m_options.chunkChars);
        m_notes.insert(key, QStringList(pieces.size()));
        for (int i = 0; i < pieces.size(); ++i)
            jobs << std::make_tuple(key, i, pieces.at(i));
    }
    m_total = int(jobs.size());
    if (m_total == 0) {
        fail(QStringLiteral("no document was routed to any agent file"));
        return;
    }
    startStage(Stage::Mapping);
    for (const auto &[key, index, text] : jobs) {
        const FileSpec spec = fileSpec(key);
        const int pieces = int(m_notes.value(key).size());
        const int limit = std::max(2000, m_options.budgetChars / std::max(1, pieces));
        const QString prompt = QStringLiteral(
                                   "Task: map, building %1 of the agent '%2' (part %3 of %4).\n%5\n\n"
                                   "From the excerpt below, extract everything that belongs in %1: %6. Keep exact "
                                   "names, numbers and signatures. At most %7 characters.\n\nExcerpt:\n%8\n\nNotes:")
                                   .arg(spec.fileName, m_options.name)
                                   .arg(index + 1)
                                   .arg(pieces)
                                   .arg(scopeLine(m_options.scope), spec.what)
                                   .arg(limit)
                                   .arg(text);
        ask(QStringLiteral("map"), prompt, 0,
            [this, key, index, limit](const QString &answer) { m_notes[key][index] = answer.trimmed().left(limit); });
    }
}

void AgentBuilder::runReduce()
{
    QStringList keys;
    for (const QString &key : fileKeys())
        if (!m_notes.value(key).isEmpty())
            keys << key;
    m_total = int(keys.size());
    startStage(Stage::Reducing);
    for (const QString &key : std::as_const(keys)) {
        const FileSpec spec = fileSpec(key);
        // Within the budget: each part's notes get an equal share.
        const QStringList notes = m_notes.value(key);
        const int share = m_options.budgetChars / int(notes.size());
        QStringList parts;
        for (const QString &n : notes)
            parts << n.left(share);
        const QString prompt =
            QStringLiteral("Task: reduce, writing %1 of the agent '%2'.\n%3\n\n"
                           "Combine the notes below into %1: %4. Format: %5. At most %6 characters. Write "
                           "only the file's content.\n\nNotes:\n%7\n\n%1:")
                .arg(spec.fileName, m_options.name, scopeLine(m_options.scope), spec.what, spec.format)
                .arg(spec.outputChars)
                .arg(parts.join(QStringLiteral("\n\n---\n\n")));
        ask(QStringLiteral("reduce"), prompt, 0,
            [this, key](const QString &answer) { m_reduced.insert(key, answer.trimmed()); });
    }
}

} // namespace autocomp
