#pragma once

#include "llm/model_spec.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QStringList>
#include <QUrl>

#include <functional>
#include <optional>

namespace autocomp {

class LlmClient;
class LlmReply;
class RunStore;

// One document the builder read: a file of a folder, a PDF, or a web page.
struct AgentSourceDocument
{
    QString source; // path or URL
    QString title;
    QString kind; // text | markdown | html | pdf | web
    QString text; // as the model reads it (HTML and PDF converted)
};

struct AgentBuildOptions
{
    QString name;
    QStringList sources; // folders, files (text, markdown, HTML, PDF) and http(s) URLs
    QString scope; // what the agent is for, e.g. "int8 GEMM and convolution kernels"
    QString model; // provider::model, as in run configurations
    QString target; // the target the agent is for (agent_config.yaml), optional
    int budgetChars = 150000; // what one file's reduce step reads at most (Autocomp's default)
    int chunkChars = 24000; // what one map call reads at most
    int maxPages = 40; // web pages per URL
    int maxFileBytes = 512 * 1024;
    int maxDepth = 6; // folder depth
    QString outDir; // default: Repository::userDataDir()/agents/NAME
    bool overwrite = false; // replace an earlier user agent of that name (never a shipped one)
};

// What a build will read and roughly cost, shown before anything is sent. Counts are upper bounds: every
// document is assumed to pass the filter.
struct AgentBuildPlan
{
    QList<AgentSourceDocument> documents;
    QStringList skipped; // "source: why"
    QString outDir;
    int filterCalls = 0;
    int routeCalls = 0;
    int mapCalls = 0; // at most
    int reduceCalls = 0; // at most
    qint64 promptChars = 0;
    qint64 estimatedTokensIn = 0;
    qint64 estimatedTokensOut = 0;
    std::optional<double> estimatedUsd; // nullopt: the model is not in the price table
    int calls() const { return filterCalls + routeCalls + mapCalls + reduceCalls; }
    QString describe(const QString &model) const;
};

// Builds an agent's file set from documents the way Autocomp's agent builder does (../shared/REFERENCE.md):
// a light filter against the scope, routing to architecture / ISA / optimizations / rules / examples, each
// file built by map-reduce within a character budget, then agent_config.yaml, architecture.md, isa_docs.md
// (## / ###), optimization_menu.yaml (generic strategies plus the extracted ones), rules.yaml and
// code_examples.md, written to the user's data dir and checked by loading them as an agent.
//
// Every call goes through the LlmClient and is recorded in the store (phase "build:<stage>", no run) before
// it is sent; an answer already in the store for the same request is reused, so a build that was killed or
// cancelled and is started again repeats no paid call. Lives on the thread of its client.
class AgentBuilder : public QObject
{
    Q_OBJECT
public:
    enum class Stage { Idle, Collecting, Filtering, Routing, Mapping, Reducing, Writing, Done, Failed };
    Q_ENUM(Stage)

    AgentBuilder(AgentBuildOptions options, LlmClient *client, RunStore *store, QObject *parent = nullptr);
    ~AgentBuilder() override;

    // Checks the name, the model and where the files would go; false with a message naming what is wrong.
    bool validate(QString *error) const;
    // Reads the documents (web pages asynchronously) and emits planReady() or failed().
    void collect();
    // Runs the stages on the collected plan; emits progress and finally finished() or failed().
    void build();
    // Stops the build: calls not yet handed to the network are dropped; calls already on their way (which
    // the provider may be answering, and billing) are left to finish and their answers are stored, not used.
    // The next build takes every stored answer from the store and waits for those still on their way
    // instead of sending them again: no answer is paid for twice.
    void cancel();

    Stage stage() const { return m_stage; }
    const AgentBuildPlan &plan() const { return m_plan; }
    QString outDir() const;
    int callsSent() const { return m_sent; }
    int callsReused() const { return m_reused; }
    // Calls sent and not answered yet; after a cancel, those whose answers are still to be stored (a program
    // that ends now loses them, and the next build pays for them again).
    int callsOnTheWay() const;
    double usd() const { return m_usd; }
    // The files written (name -> text), after finished().
    QHash<QString, QString> files() const { return m_files; }
    // Where each kept document went: source -> architecture | isa | optimization | rules | examples.
    QHash<QString, QString> routes() const { return m_routes; }

    static QString stageName(Stage stage);
    // The 15 strategies every built menu starts with (our own words for Autocomp's generic list).
    static QStringList genericStrategies();
    // Reads a PDF as text; set by programs built with Poppler's Qt 6 binding (without one PDFs are skipped).
    using PdfReader = std::function<std::optional<QString>(const QString &path, QString *error)>;
    static void setPdfReader(PdfReader reader);
    static bool canReadPdf();
    // Splits a text into pieces of at most `limit` characters, at paragraph (else line) boundaries.
    static QStringList chunks(const QString &text, int limit);

Q_SIGNALS:
    void planReady();
    void stageChanged(autocomp::AgentBuilder::Stage stage, int total);
    void progress(int done, int total);
    void usageChanged(int sent, int reused, double usd);
    void logLine(const QString &line);
    void finished(const QString &outDir);
    void failed(const QString &error);

private:
    struct Pending;
    void readLocal(const QString &path, int depth);
    void fetchNext();
    void planned();
    void startStage(Stage stage);
    void runFilter();
    void runRoute();
    void runMap();
    void runReduce();
    void writeFiles();
    void fail(const QString &error);
    // One request: reused from the store, taken over from an earlier build's call still on its way, or sent;
    // `done` gets the answer text.
    void ask(const QString &phase, const QString &prompt, int sample, const std::function<void(const QString &)> &done);
    void oneDone();

    AgentBuildOptions m_options;
    std::optional<ModelSpec> m_spec;
    LlmClient *m_client;
    RunStore *m_store;
    Stage m_stage = Stage::Idle;
    AgentBuildPlan m_plan;
    // Web crawl state.
    QList<QUrl> m_queue;
    QSet<QString> m_seen;
    QHash<QString, QString> m_prefixOf; // queued URL -> its start URL's prefix
    QHash<QString, int> m_pagesOf; // prefix -> pages read
    QList<QPointer<QObject>> m_inFlight;
    QHash<QString, QPointer<LlmReply>> m_onTheWay; // request hash -> the call sent for it, until it finishes
    QSet<QString> m_answered; // request hashes with an answer in the store
    int m_outstanding = 0;
    int m_total = 0;
    int m_done = 0;
    int m_sent = 0;
    int m_reused = 0;
    double m_usd = 0;
    bool m_cancelled = false;
    quint64 m_generation = 0; // build() and cancel() start a new one; answers of an older one are dropped
    QList<int> m_kept; // documents that passed the filter
    QHash<QString, QString> m_routes;
    QHash<QString, QStringList> m_notes; // file -> map outputs in chunk order
    QHash<QString, QString> m_reduced; // file -> reduce output
    QHash<QString, QString> m_files;
};

} // namespace autocomp
