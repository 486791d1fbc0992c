//! The protocol loop: the handshake, document synchronisation and one handler
//! per request. Requests are answered on this thread from the document's
//! text and the registry (no compile, no disk write, no network); diagnostics
//! come from the worker thread.

use std::sync::Arc;

use crossbeam_channel::Sender;
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument, Notification as _,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, Formatting, GotoDefinition, HoverRequest, References,
    Request as _, SemanticTokensFullRequest,
};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionProviderCapability, CompletionOptions,
    CompletionParams, CompletionResponse, DidChangeTextDocumentParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, DocumentFormattingParams, DocumentSymbolParams,
    DocumentSymbolResponse, GotoDefinitionParams, GotoDefinitionResponse, Hover, HoverContents, HoverParams,
    HoverProviderCapability, InitializeParams, MarkupContent, MarkupKind, OneOf, ReferenceParams, SemanticTokens,
    SemanticTokensFullOptions, SemanticTokensOptions, SemanticTokensParams, SemanticTokensResult,
    SemanticTokensServerCapabilities, ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Uri, WorkspaceEdit,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::Context;
use crate::documents::{Document, Documents};
use crate::library::Library;
use crate::text::{apply_change, LineIndex};
use crate::worker::{Envelope, Job, Published};
use crate::{completion, hover, navigate, semantic, symbols, Error};

pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            save: Some(TextDocumentSyncSaveOptions::Supported(true)),
            ..TextDocumentSyncOptions::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), "\"".into(), "/".into()]),
            ..CompletionOptions::default()
        }),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: semantic::legend(),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                ..SemanticTokensOptions::default()
            },
        )),
        ..ServerCapabilities::default()
    }
}

pub struct Server<'a> {
    pub connection: &'a Connection,
    pub documents: Documents,
    pub library: Arc<Library>,
    pub published: Arc<Published>,
    pub jobs: Sender<Envelope>,
    pub completion: completion::Options,
}

/// What the client said it supports, from `initialize`.
pub fn client_snippets(params: &Value) -> bool {
    let params: Option<InitializeParams> = serde_json::from_value(params.clone()).ok();
    params
        .and_then(|p| p.capabilities.text_document)
        .and_then(|t| t.completion)
        .and_then(|c| c.completion_item)
        .and_then(|i| i.snippet_support)
        .unwrap_or(false)
}

pub fn server_info() -> ServerInfo {
    ServerInfo {
        name: "expc".to_string(),
        version: Some(env!("CARGO_PKG_VERSION").to_string()),
    }
}

impl Server<'_> {
    /// Serves until `shutdown` and `exit`, or until the client goes away.
    pub fn serve(&mut self) -> Result<(), Error> {
        for message in &self.connection.receiver {
            match message {
                Message::Request(request) => {
                    if self.connection.handle_shutdown(&request)? {
                        return Ok(());
                    }
                    let response = self.request(request);
                    self.send(Message::Response(response))?;
                }
                // After `shutdown`, `handle_shutdown` takes the `exit` itself.
                Message::Notification(n) if n.method == "exit" => return Err(Error::ExitWithoutShutdown),
                Message::Notification(notification) => self.notification(notification),
                Message::Response(_) => {}
            }
        }
        Ok(())
    }

    fn send(&self, message: Message) -> Result<(), Error> {
        self.connection.sender.send(message).map_err(|_| Error::Disconnected)
    }

    fn notification(&mut self, notification: Notification) {
        let method = notification.method.as_str();
        let job = match method {
            DidOpenTextDocument::METHOD => parse::<DidOpenTextDocumentParams>(notification.params).map(|p| {
                let document = p.text_document;
                self.documents
                    .open(document.uri.clone(), document.version, document.text);
                Job::Changed {
                    uri: document.uri,
                    immediate: true,
                }
            }),
            DidChangeTextDocument::METHOD => parse::<DidChangeTextDocumentParams>(notification.params).and_then(|p| {
                let uri = p.text_document.uri;
                let mut text = self.documents.get(&uri)?.text.to_string();
                for change in p.content_changes {
                    apply_change(&mut text, change);
                }
                self.documents.update(&uri, p.text_document.version, text);
                Some(Job::Changed { uri, immediate: false })
            }),
            DidSaveTextDocument::METHOD => {
                parse::<DidSaveTextDocumentParams>(notification.params).map(|p| Job::Changed {
                    uri: p.text_document.uri,
                    immediate: true,
                })
            }
            DidCloseTextDocument::METHOD => parse::<DidCloseTextDocumentParams>(notification.params).map(|p| {
                self.documents.close(&p.text_document.uri);
                Job::Closed {
                    uri: p.text_document.uri,
                }
            }),
            _ => None,
        };
        if let Some(job) = job {
            let documents = self.documents.snapshot();
            // The worker has stopped only if it panicked; requests still work.
            let _ = self.jobs.send(Envelope { job, documents });
        }
    }

    fn request(&mut self, request: Request) -> Response {
        let id = request.id.clone();
        let result = match request.method.as_str() {
            HoverRequest::METHOD => self.handle(request, |s, p: HoverParams| s.hover(p)),
            Completion::METHOD => self.handle(request, |s, p: CompletionParams| s.completion(p)),
            GotoDefinition::METHOD => self.handle(request, |s, p: GotoDefinitionParams| s.definition(p)),
            References::METHOD => self.handle(request, |s, p: ReferenceParams| s.references(p)),
            DocumentSymbolRequest::METHOD => self.handle(request, |s, p: DocumentSymbolParams| s.symbols(p)),
            Formatting::METHOD => self.handle(request, |s, p: DocumentFormattingParams| s.format(p)),
            SemanticTokensFullRequest::METHOD => self.handle(request, |s, p: SemanticTokensParams| s.semantic(p)),
            CodeActionRequest::METHOD => self.handle(request, |s, p: CodeActionParams| s.code_actions(p)),
            method => Err((
                ErrorCode::MethodNotFound,
                format!("expc lsp does not handle `{method}`"),
            )),
        };
        match result {
            Ok(value) => Response::new_ok(id, value),
            Err((code, message)) => Response::new_err(id, code as i32, message),
        }
    }

    fn handle<P: DeserializeOwned, R: serde::Serialize>(
        &mut self,
        request: Request,
        handler: impl FnOnce(&mut Self, P) -> Option<R>,
    ) -> Result<Value, (ErrorCode, String)> {
        let params: P = serde_json::from_value(request.params)
            .map_err(|e| (ErrorCode::InvalidParams, format!("{}: {e}", request.method)))?;
        let result = handler(self, params);
        serde_json::to_value(result).map_err(|e| (ErrorCode::InternalError, e.to_string()))
    }

    /// The open document `uri`, unless it is too large to analyse (its
    /// diagnostic says so; requests get no answer).
    fn document(&self, uri: &Uri) -> Option<&Document> {
        self.documents.get(uri).filter(|d| !d.too_large())
    }

    /// The open document `uri` with a context over its text.
    fn with<R>(&self, uri: &Uri, f: impl FnOnce(&Document, &Context) -> Option<R>) -> Option<R> {
        let document = self.document(uri)?;
        let overlay = self.documents.overlay();
        let context = Context::new(&document.text, document.path.as_deref(), &overlay, &self.library);
        f(document, &context)
    }

    fn hover(&self, params: HoverParams) -> Option<Hover> {
        let position = params.text_document_position_params;
        self.with(&position.text_document.uri, |document, context| {
            let index = LineIndex::new(&document.text);
            let offset = index.offset(position.position);
            let codes: Vec<exp_diagnostics::Code> = self
                .published
                .get(&document.uri, document.version)
                .iter()
                .filter(|c| {
                    let range = &c.diagnostic.range;
                    index.offset(range.start) <= offset && offset <= index.offset(range.end)
                })
                .filter_map(|c| match &c.diagnostic.code {
                    Some(lsp_types::NumberOrString::String(code)) => exp_diagnostics::Code::parse(code),
                    _ => None,
                })
                .collect();
            let (markdown, range) = hover::hover(context, offset, &codes)?;
            Some(Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: markdown,
                }),
                range: Some(index.range(range)),
            })
        })
    }

    fn completion(&self, params: CompletionParams) -> Option<CompletionResponse> {
        let position = params.text_document_position;
        self.with(&position.text_document.uri, |document, context| {
            let offset = LineIndex::new(&document.text).offset(position.position);
            Some(CompletionResponse::Array(completion::complete(
                context,
                offset,
                &self.completion,
            )))
        })
    }

    fn definition(&self, params: GotoDefinitionParams) -> Option<GotoDefinitionResponse> {
        let position = params.text_document_position_params;
        self.with(&position.text_document.uri, |document, context| {
            let offset = LineIndex::new(&document.text).offset(position.position);
            navigate::definition(context, &document.uri, offset).map(GotoDefinitionResponse::Scalar)
        })
    }

    fn references(&self, params: ReferenceParams) -> Option<Vec<lsp_types::Location>> {
        let position = params.text_document_position;
        let include_declaration = params.context.include_declaration;
        self.with(&position.text_document.uri, |document, context| {
            let offset = LineIndex::new(&document.text).offset(position.position);
            let mut found = navigate::references(context, &document.uri, offset, &self.documents);
            if !include_declaration {
                let definition = navigate::definition(context, &document.uri, offset);
                found.retain(|l| Some(l) != definition.as_ref());
            }
            Some(found)
        })
    }

    fn symbols(&self, params: DocumentSymbolParams) -> Option<DocumentSymbolResponse> {
        let document = self.document(&params.text_document.uri)?;
        Some(DocumentSymbolResponse::Nested(symbols::outline(&document.text)))
    }

    fn format(&self, params: DocumentFormattingParams) -> Option<Vec<lsp_types::TextEdit>> {
        let document = self.document(&params.text_document.uri)?;
        symbols::format(&document.text)
    }

    fn semantic(&self, params: SemanticTokensParams) -> Option<SemanticTokensResult> {
        self.with(&params.text_document.uri, |_, context| {
            Some(SemanticTokensResult::Tokens(SemanticTokens {
                result_id: None,
                data: semantic::tokens(context),
            }))
        })
    }

    /// The quick fixes of the diagnostics in the range, if they were computed
    /// for the document's current text.
    fn code_actions(&self, params: CodeActionParams) -> Option<Vec<CodeActionOrCommand>> {
        let uri = params.text_document.uri;
        let document = self.documents.get(&uri)?;
        let wanted = params.range;
        let overlaps = |r: &lsp_types::Range| r.start <= wanted.end && wanted.start <= r.end;
        let mut actions = Vec::new();
        for converted in self.published.get(&uri, document.version) {
            if !overlaps(&converted.diagnostic.range) {
                continue;
            }
            let single = converted.fixes.len() == 1;
            for (title, edits) in converted.fixes {
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title,
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![converted.diagnostic.clone()]),
                    edit: Some(WorkspaceEdit::new([(uri.clone(), edits)].into_iter().collect())),
                    is_preferred: Some(single),
                    ..CodeAction::default()
                }));
            }
        }
        Some(actions)
    }
}

fn parse<P: DeserializeOwned>(params: Value) -> Option<P> {
    serde_json::from_value(params).ok()
}
